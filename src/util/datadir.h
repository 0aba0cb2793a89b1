/* Where sagebuild's own data lives (kernels/, manifests/): $SAGEBUILD_DATADIR, else
 * <exe>/../share/sagebuild when installed, else the source tree the binary was built in. */
#ifndef SB_DATADIR_H
#define SB_DATADIR_H

/* Heap string naming the folder that holds `what` ("kernels", "manifests"), or NULL. */
char *datadir_find(const char *what);
/* Pure core: the candidates in order for an executable path; NULL-terminated heap array. */
char **datadir_candidates(const char *env_value, const char *exe_path);
void datadir_free_list(char **list);

#endif
