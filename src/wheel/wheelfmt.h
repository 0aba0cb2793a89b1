/* The texts inside a wheel (PEP 427 / PEP 376 / core metadata 2.1) and its file name, for the
 * `sageattention` drop-in. Pure: strings and digests in, strings out. */
#ifndef SB_WHEEL_WHEELFMT_H
#define SB_WHEEL_WHEELFMT_H

#include <stddef.h>

#define WHEEL_DIST_NAME "sageattention"
/* The upstream release whose public API the drop-in follows. */
#define WHEEL_API_VERSION "2.2.0"
/* The PEP 440 local label that marks this implementation: "2.2.0+sagebuild.0.1.0". */
#define WHEEL_LOCAL_LABEL "sagebuild"

/* "2.2.0+sagebuild.<cli version>", with anything a local label cannot hold turned into '.'.
 * Heap string. */
char *wheel_version(const char *cli_version);
/* Whether an installed sageattention version is one of ours (its local label starts with
 * "sagebuild"); upstream releases ("2.2.0", "2.2.0+cu128torch2.7.1") are not. */
int wheel_version_is_ours(const char *version);

/* "linux_x86_64" for a uname machine; NULL when the machine name is empty or has a character
 * a wheel tag cannot carry. Heap string. */
char *wheel_platform_tag(const char *machine);
/* "py3-none-linux_x86_64"; NULL as above. Heap. */
char *wheel_tag(const char *machine);
/* "sageattention-2.2.0+sagebuild.0.1.0-py3-none-linux_x86_64.whl"; NULL as above. Heap. */
char *wheel_file_name(const char *version, const char *machine);
/* "sageattention-2.2.0+sagebuild.0.1.0.dist-info". Heap. */
char *wheel_dist_info_dir(const char *version);

struct wheel_meta {
    const char *version;     /* the distribution's version */
    const char *cli_version; /* the sagebuild that made it */
    const char *archs;       /* "sm_90,sm_120a", NULL when unknown */
    const char *nvcc;        /* "13.0.88", NULL when unknown */
};

/* METADATA: Metadata-Version 2.1, Name, Version, Summary, Requires-Python and a short
 * description naming the archs. Heap. */
char *wheel_metadata_text(const struct wheel_meta *m);
/* WHEEL: Wheel-Version 1.0, Generator, Root-Is-Purelib: false (it ships a shared library), Tag.
 * Heap. */
char *wheel_wheel_text(const char *tag, const char *cli_version);
/* top_level.txt. Heap. */
char *wheel_top_level_text(void);

/* "sha256=<urlsafe base64 of the 32 bytes, no padding>" for a lowercase or uppercase hex
 * SHA-256; NULL when hex is not 64 hex digits. Heap. */
char *wheel_record_digest(const char *sha256_hex);
/* Base64 with the URL-safe alphabet and no '=' padding (RFC 4648 §5). Heap. */
char *wheel_b64url_nopad(const unsigned char *data, size_t len);

/* Whether an archive path is one a wheel may hold: relative, '/'-separated, no empty, "." or
 * ".." part, no backslash or control byte. */
int wheel_path_ok(const char *path);

struct wheel_record_row {
    const char *path;   /* archive path */
    const char *sha256; /* hex; NULL for RECORD's own row */
    long long size;     /* ignored for RECORD's own row */
};

/* RECORD: one CSV row per file ("path,sha256=...,size"), in the order given; the row whose
 * sha256 is NULL is written "path,," (RECORD itself). Paths are CSV-quoted when they hold a
 * comma, quote or newline. NULL when a digest is malformed. Heap. */
char *wheel_record_text(const struct wheel_record_row *rows, size_t n);

/* The order entries are written in: the package's files sorted bytewise, then the dist-info
 * files sorted, with RECORD last (PEP 427 asks for the dist-info at the end, RECORD last).
 * A qsort comparator over `const char *` archive paths; dist_info is the folder name. */
int wheel_entry_order(const char *a, const char *b, const char *dist_info);

/* Whether a build folder's recommendation.json (TEAM contract 2) belongs with the library being
 * packed: 1 when its library_sha256 equals library_sha256 (hex, any case), 0 when it names
 * another library or none, -1 when the text is not such a record. *why (heap, optional) says
 * why it does not fit. */
int wheel_recommendation_fits(const char *json, const char *library_sha256, char **why);

#endif
