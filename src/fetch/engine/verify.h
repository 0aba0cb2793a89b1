/* SHA-256 through OpenSSL's EVP interface, incremental so bytes are hashed as they arrive. */
#ifndef SB_FETCH_VERIFY_H
#define SB_FETCH_VERIFY_H

#include <stddef.h>

struct sha256_ctx {
    void *evp; /* EVP_MD_CTX */
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
/* Writes 64 lowercase hex digits and a NUL into hex; the context can be initialised again. */
void sha256_final(struct sha256_ctx *c, char hex[65]);
void sha256_free(struct sha256_ctx *c);

/* Hashes the first `limit` bytes of fd from offset 0 (limit < 0: to EOF) into c, which must be
 * initialised. Returns the bytes read, or -1 with errno. */
long long sha256_fd_update(struct sha256_ctx *c, int fd, long long limit);
/* Whole-file hash; 0 or -1 with errno. *size (optional) gets the byte count. */
int sha256_file(const char *path, char hex[65], long long *size);

#endif
