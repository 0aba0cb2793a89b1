/* <out>/build-record.json: what a build was made from, and the up-to-date decision that
 * compares the last record with what is asked now. Pure: text in, structs out. */
#ifndef SB_BUILD_RECORD_H
#define SB_BUILD_RECORD_H

#include "ptxas.h"

#define BUILD_RECORD_SCHEMA 1
#define BUILD_RECORD_NAME "build-record.json"

struct build_record {
    char *sagebuild_version;
    char *archs;     /* "sm_90,sm_120a" */
    char *head_dims; /* "64,128" */
    char *nvcc_path;
    char *nvcc_version; /* "13.0.88" */
    char *nvcc_command; /* how CMake ran nvcc on the first .cu file: the real flags */
    char *cuda_home;
    char *cuda_home_rule; /* how it was chosen: "--cuda-home", "fetched toolkit", ... */
    char *host_cxx_path;
    char *host_cxx_version;
    char *generator; /* "Ninja" */
    char *cmake_version;
    char *kernels_dir;
    char *source_hash;     /* sha256 over the kernel sources */
    char *source_revision; /* git revision ("-dirty" when changed), NULL when not a checkout */
    char **flags;          /* the CMake configure command line, one word each */
    int nflags;
    int jobs;
    double cpu_seconds; /* user + system of every child process of the build */
    double wall_seconds;
    char *finished_at; /* UTC, ISO 8601 */
    int have_ptxas;    /* the log had ptxas -v reports */
    struct ptxas_summary ptxas;
};

/* Pretty-printed JSON with "schema". Heap string. */
char *build_record_to_json(const struct build_record *r);
/* 0 when text is a record of a schema we read; -1 otherwise (r zeroed, nothing to free). */
int build_record_from_json(const char *text, struct build_record *r);
void build_record_free(struct build_record *r);

enum build_freshness {
    BUILD_UP_TO_DATE = 0,
    BUILD_NO_RECORD,       /* first build here, or the record is unreadable */
    BUILD_CONFIG_CHANGED,  /* archs, head dims, compilers, generator, ... */
    BUILD_SOURCES_CHANGED, /* the kernel sources' hash differs */
    BUILD_OUTPUTS_MISSING, /* the record says built, but installed files are gone */
    BUILD_FORCED,
};

/* Decides whether `want` (the inputs of the build asked now) needs work, against prev (the last
 * record, NULL when none). *why (heap, optional) says what changed. */
enum build_freshness build_decide(const struct build_record *prev, const struct build_record *want,
                                  int outputs_present, int force, char **why);

#endif
