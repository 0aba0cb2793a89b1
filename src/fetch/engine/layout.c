#include "layout.h"
#include "util/fs.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The files a usable toolkit must have, relative to its root (NULL-terminated). A path with a
 * '|' lists alternatives. */
static const char *const layout_required[] = {
    "bin/nvcc",
    "bin/nvcc.profile",
    "bin/ptxas",
    "bin/fatbinary",
    "bin/nvlink",
    "bin/cudafe++",
    "nvvm/bin/cicc",
    "nvvm/libdevice/libdevice.10.bc",
    "include/crt/host_config.h",
    "include/cuda_runtime.h",
    "include/cuda_fp16.h",
    "include/nv/target|include/cccl/nv/target",
    "lib64/libcudart.so|lib64/libcudart_static.a",
    NULL,
};

static int is_real_dir(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int layout_merge(const char *src, const char *dst, struct fetch_error *err)
{
    if (!fs_exists(dst)) {
        char *parent = fs_dirname(dst);
        fs_mkdir_p(parent, 0755);
        free(parent);
        if (rename(src, dst) < 0)
            return fetch_fail_errno(err, errno, "cannot move %s to %s", src, dst);
        return 0;
    }
    DIR *d = opendir(src);
    if (!d)
        return fetch_fail_errno(err, errno, "cannot read %s", src);
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *s = fs_join(src, de->d_name);
        char *t = fs_join(dst, de->d_name);
        if (is_real_dir(s) && is_real_dir(t)) {
            rc = layout_merge(s, t, err);
        } else {
            if (is_real_dir(t))
                fs_remove_tree(t);
            if (rename(s, t) < 0)
                rc = fetch_fail_errno(err, errno, "cannot move %s to %s", s, t);
        }
        free(s);
        free(t);
    }
    closedir(d);
    if (rc == 0)
        rmdir(src);
    return rc;
}

static int add_link(const char *root, const char *link, const char *target, struct strbuf *log,
                    struct fetch_error *err)
{
    char *p = fs_join(root, link);
    int rc = 0;
    if (symlink(target, p) < 0) {
        rc = fetch_fail_errno(err, errno, "cannot create %s", p);
    } else {
        sb_addf(log, "%s -> %s\n", link, target);
    }
    free(p);
    return rc;
}

int layout_fixup(const char *root, const char *release, const char *const *components,
                 const char *const *versions, int n, struct strbuf *log, struct fetch_error *err)
{
    char *lib = fs_join(root, "lib"), *lib64 = fs_join(root, "lib64");
    int rc = 0;
    if (fs_is_dir(lib) && !fs_exists(lib64))
        rc = add_link(root, "lib64", "lib", log, err);
    free(lib);
    free(lib64);
    if (rc < 0)
        return rc;
    char *nv = fs_join(root, "include/nv"), *cccl_nv = fs_join(root, "include/cccl/nv");
    if (!fs_exists(nv) && fs_is_dir(cccl_nv))
        rc = add_link(root, "include/nv", "cccl/nv", log, err);
    free(nv);
    free(cccl_nv);
    if (rc < 0)
        return rc;
    /* version.json in the shape a full toolkit install has. */
    cJSON *doc = cJSON_CreateObject();
    cJSON *cuda = cJSON_AddObjectToObject(doc, "cuda");
    cJSON_AddStringToObject(cuda, "name", "CUDA SDK");
    cJSON_AddStringToObject(cuda, "version", release);
    for (int i = 0; i < n; i++) {
        cJSON *c = cJSON_AddObjectToObject(doc, components[i]);
        cJSON_AddStringToObject(c, "version", versions[i]);
    }
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    char *path = fs_join(root, "version.json");
    if (fs_write_file(path, text, strlen(text)) < 0)
        rc = fetch_fail_errno(err, errno, "cannot write %s", path);
    free(path);
    free(text);
    return rc;
}

int layout_check(const char *root, struct strbuf *missing)
{
    int n = 0;
    for (const char *const *r = layout_required; *r; r++) {
        int found = 0;
        const char *p = *r;
        while (*p && !found) {
            size_t len = strcspn(p, "|");
            char *rel = xstrndup(p, len);
            char *full = fs_join(root, rel);
            found = fs_exists(full);
            free(full);
            free(rel);
            p += len;
            if (*p == '|')
                p++;
        }
        if (!found) {
            sb_addf(missing, "%s%s", n ? ", " : "", *r);
            n++;
        }
    }
    return n;
}
