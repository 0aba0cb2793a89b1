/* XDG base directories: ~/.cache/sagebuild and ~/.local/share/sagebuild unless overridden. */
#ifndef SB_XDG_H
#define SB_XDG_H

/* Pure core: decides from the given environment values. Heap strings; NULL if no home. */
char *xdg_dir_from(const char *xdg_value, const char *home, const char *fallback_rel);
char *xdg_cache_dir(void); /* $SAGEBUILD_CACHE or $XDG_CACHE_HOME/sagebuild or ~/.cache/sagebuild */
char *xdg_data_dir(void);  /* $XDG_DATA_HOME/sagebuild or ~/.local/share/sagebuild */

#endif
