#if __GNUC__ > 14
#error -- unsupported GNU version! gcc versions later than 14
#endif
#if (__clang_major__ >= 20)
#error -- unsupported clang version!
