#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

void sha256_init(struct sha256_ctx *c)
{
    if (!c->evp)
        c->evp = EVP_MD_CTX_new();
    if (!c->evp || EVP_DigestInit_ex(c->evp, EVP_sha256(), NULL) != 1)
        abort(); /* only on allocation failure, like xmalloc */
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
    EVP_DigestUpdate(c->evp, data, len);
}

void sha256_final(struct sha256_ctx *c, char hex[65])
{
    unsigned char md[32];
    unsigned int n = 0;
    EVP_DigestFinal_ex(c->evp, md, &n);
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

void sha256_free(struct sha256_ctx *c)
{
    EVP_MD_CTX_free(c->evp);
    c->evp = NULL;
}

long long sha256_fd_update(struct sha256_ctx *c, int fd, long long limit)
{
    static const size_t chunk = 1 << 20;
    char *buf = malloc(chunk);
    if (!buf)
        abort();
    long long done = 0;
    while (limit < 0 || done < limit) {
        size_t want = limit < 0 || limit - done > (long long)chunk ? chunk : (size_t)(limit - done);
        ssize_t n = pread(fd, buf, want, done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(buf);
            return -1;
        }
        if (n == 0)
            break;
        sha256_update(c, buf, (size_t)n);
        done += n;
    }
    free(buf);
    return done;
}

int sha256_file(const char *path, char hex[65], long long *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct sha256_ctx c = {0};
    sha256_init(&c);
    long long n = sha256_fd_update(&c, fd, -1);
    int e = errno;
    close(fd);
    if (n < 0) {
        sha256_free(&c);
        errno = e;
        return -1;
    }
    sha256_final(&c, hex);
    sha256_free(&c);
    if (size)
        *size = n;
    return 0;
}
