#include "products.h"
#include "util/fs.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int build_is_product(const char *name)
{
    static const char *const suffixes[] = {".o", ".a", ".so", ".cubin", ".fatbin", ".ptx"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (ends_with(name, suffixes[i]))
            return 1;
    return strstr(name, ".so.") != NULL; /* libsageattn.so.1 */
}

static void scan(const char *dir, int depth, double *newest)
{
    DIR *d = depth < 16 ? opendir(dir) : NULL;
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *path = fs_join(dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                scan(path, depth + 1, newest);
            } else if (S_ISREG(st.st_mode) && build_is_product(e->d_name)) {
                double t = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
                if (t > *newest)
                    *newest = t;
            }
        }
        free(path);
    }
    closedir(d);
}

double build_products_newest(const char *build_dir)
{
    double newest = 0;
    scan(build_dir, 0, &newest);
    return newest;
}
