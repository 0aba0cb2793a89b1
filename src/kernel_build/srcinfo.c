#include "srcinfo.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GIT_TIMEOUT_MS 3000
#define MAX_SOURCE_FILE (64u << 20)

int srcinfo_is_input(const char *name)
{
    if (name[0] == '.')
        return 0;
    return strncmp(name, "build", 5) != 0 && strncmp(name, "cmake-build", 11) != 0 &&
           strcmp(name, "bench") != 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (heap array, *n set); NULL when it cannot be opened. */
static char **sorted_entries(const char *dir, int *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    int cap = 0;
    *n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            names = xrealloc(names, (size_t)cap * sizeof *names);
        }
        names[(*n)++] = xstrdup(de->d_name);
    }
    closedir(d);
    if (*n)
        qsort(names, (size_t)*n, sizeof *names, cmp_names);
    return names ? names : xcalloc(1, sizeof *names);
}

static int hash_dir(EVP_MD_CTX *ctx, const char *root, const char *rel, int depth, char **error)
{
    char *dir = rel[0] ? fs_join(root, rel) : xstrdup(root);
    int n = 0;
    char **names = sorted_entries(dir, &n);
    if (!names) {
        *error = xasprintf("cannot read %s: %s", dir, strerror(errno));
        free(dir);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (depth == 0 && !srcinfo_is_input(names[i]))
            continue;
        if (names[i][0] == '.')
            continue;
        char *relpath = rel[0] ? fs_join(rel, names[i]) : xstrdup(names[i]);
        char *path = fs_join(root, relpath);
        struct stat st;
        if (lstat(path, &st) < 0) {
            *error = xasprintf("cannot stat %s: %s", path, strerror(errno));
            rc = -1;
        } else if (S_ISDIR(st.st_mode)) {
            rc = depth > 32 ? 0 : hash_dir(ctx, root, relpath, depth + 1, error);
        } else if (S_ISLNK(st.st_mode) || S_ISREG(st.st_mode)) {
            char *data = NULL;
            size_t len = 0;
            if (S_ISLNK(st.st_mode)) {
                char target[4096];
                ssize_t k = readlink(path, target, sizeof target);
                data = xstrndup(target, k > 0 ? (size_t)k : 0);
                len = strlen(data);
            } else {
                data = fs_read_file(path, MAX_SOURCE_FILE, &len);
            }
            if (!data) {
                *error = xasprintf("cannot read %s: %s", path, strerror(errno));
                rc = -1;
            } else {
                /* path, NUL, size, NUL, content: no two trees give the same byte stream */
                char size[32];
                int sl = snprintf(size, sizeof size, "%zu", len);
                EVP_DigestUpdate(ctx, relpath, strlen(relpath) + 1);
                EVP_DigestUpdate(ctx, size, (size_t)sl + 1);
                EVP_DigestUpdate(ctx, data, len);
                free(data);
            }
        }
        free(relpath);
        free(path);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(dir);
    return rc;
}

char *srcinfo_hash_tree(const char *dir, char **error)
{
    *error = NULL;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        *error = xstrdup("OpenSSL has no SHA-256");
        return NULL;
    }
    if (hash_dir(ctx, dir, "", 0, error) < 0) {
        EVP_MD_CTX_free(ctx);
        return NULL;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    char *hex = xmalloc(mdlen * 2 + 1);
    for (unsigned int i = 0; i < mdlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return hex;
}

char *srcinfo_git_revision(const char *dir)
{
    const char *rev_argv[] = {"git", "-C", dir, "rev-parse", "HEAD", NULL};
    struct proc_opts o = {.timeout_ms = GIT_TIMEOUT_MS, .max_output = 4096};
    struct proc_result r;
    if (proc_run(rev_argv, &o, &r) < 0) {
        proc_result_free(&r);
        return NULL;
    }
    char *rev = xstrndup(r.out, strcspn(r.out, "\r\n"));
    proc_result_free(&r);
    if (!*rev) {
        free(rev);
        return NULL;
    }
    const char *status_argv[] = {"git", "-C", dir, "status", "--porcelain", "--", ".", NULL};
    if (proc_run(status_argv, &o, &r) == 0 && r.out_len > 0) {
        char *dirty = xasprintf("%s-dirty", rev);
        free(rev);
        rev = dirty;
    }
    proc_result_free(&r);
    return rev;
}
