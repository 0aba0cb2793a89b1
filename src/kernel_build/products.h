/* What a compile step made: the newest object, library or device image in the build tree. A
 * step that leaves it unchanged compiled and linked nothing (ninja's "no work to do", or make's
 * silence), so its record must not replace the one of the build that made the files. */
#ifndef SB_BUILD_PRODUCTS_H
#define SB_BUILD_PRODUCTS_H

/* Pure: whether a file name is a compile or link product (.o, .a, .so, .so.N, .cubin, .fatbin,
 * .ptx). */
int build_is_product(const char *name);

/* The newest modification time (seconds, with the fraction) of the products under build_dir;
 * 0 when there are none. */
double build_products_newest(const char *build_dir);

#endif
