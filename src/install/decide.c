#include "install/decide.h"
#include "probe/arch.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

const char install_probe_script[] =
    "import os, sys, platform\n"
    "print('python\\t' + platform.python_version())\n"
    "print('executable\\t' + sys.executable)\n"
    "print('machine\\t' + platform.machine())\n"
    "print('platform\\t' + sys.platform)\n"
    "try:\n"
    "    import importlib.metadata as md\n"
    "except ImportError:\n"
    "    md = None\n"
    "def dist(name):\n"
    "    try:\n"
    "        return md.distribution(name) if md else None\n"
    "    except Exception:\n"
    "        return None\n"
    "for name in ('pip', 'torch', 'sageattention'):\n"
    "    d = dist(name)\n"
    "    if d is not None:\n"
    "        print(name + '\\t' + str(d.version))\n"
    "        if name == 'sageattention':\n"
    "            print('sageattention_location\\t' + str(d.locate_file('')))\n";

static char **slot(struct py_facts *f, const char *key)
{
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        {"python", offsetof(struct py_facts, version)},
        {"executable", offsetof(struct py_facts, executable)},
        {"machine", offsetof(struct py_facts, machine)},
        {"platform", offsetof(struct py_facts, platform)},
        {"pip", offsetof(struct py_facts, pip)},
        {"torch", offsetof(struct py_facts, torch)},
        {"sageattention", offsetof(struct py_facts, sage_version)},
        {"sageattention_location", offsetof(struct py_facts, sage_location)},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(keys[i].key, key))
            return (char **)((char *)f + keys[i].off);
    return NULL;
}

/* Calls fn for each "key\tvalue" line; values end at the line's end (a CR is dropped). */
static void each_line(const char *text, void (*fn)(void *, const char *, const char *), void *arg)
{
    for (const char *line = text; line && *line;) {
        size_t len = strcspn(line, "\n");
        const char *tab = memchr(line, '\t', len);
        if (tab) {
            size_t vlen = len - (size_t)(tab + 1 - line);
            if (vlen && tab[vlen] == '\r')
                vlen--;
            char *key = xstrndup(line, (size_t)(tab - line));
            char *value = xstrndup(tab + 1, vlen);
            fn(arg, key, value);
            free(key);
            free(value);
        }
        line += len + (line[len] == '\n');
    }
}

static void set_probe(void *arg, const char *key, const char *value)
{
    char **s = slot(arg, key);
    if (s && !*s && *value)
        *s = xstrdup(value);
}

int install_parse_probe(const char *text, struct py_facts *out)
{
    memset(out, 0, sizeof *out);
    each_line(text, set_probe, out);
    return out->version ? 0 : -1;
}

void py_facts_free(struct py_facts *f)
{
    free(f->version);
    free(f->executable);
    free(f->machine);
    free(f->platform);
    free(f->pip);
    free(f->torch);
    free(f->sage_version);
    free(f->sage_location);
    memset(f, 0, sizeof *f);
}

char *install_python_refusal(const struct py_facts *f, const char *our_machine)
{
    if (!f->platform || strncmp(f->platform, "linux", 5))
        return xasprintf("this python runs on '%s', and the wheel is for Linux",
                         f->platform ? f->platform : "an unknown platform");
    if (!f->machine || !our_machine || strcmp(f->machine, our_machine))
        return xasprintf("this python is built for '%s', and the library is built for '%s'",
                         f->machine ? f->machine : "an unknown machine",
                         our_machine ? our_machine : "?");
    if (!f->pip)
        return xstrdup("this python has no pip");
    return NULL;
}

enum replacement install_replacement(const char *installed, const char *ours, char **sentence)
{
    *sentence = NULL;
    if (!installed || !*installed)
        return REPLACE_NOTHING;
    const char *plus = strchr(installed, '+');
    int same = ours && !strcmp(installed, ours);
    if (plus && !strncmp(plus + 1, "sagebuild", 9)) {
        *sentence = xasprintf("replacing sageattention %s (sagebuild's drop-in%s) with %s",
                              installed, same ? ", the same version" : " from an earlier install",
                              ours ? ours : "this build");
        return REPLACE_OURS;
    }
    *sentence = xasprintf("replacing sageattention %s (the upstream SageAttention, compiled for "
                          "one torch and CUDA) with sagebuild's drop-in %s; `pip install "
                          "sageattention==%s` brings it back",
                          installed, ours ? ours : "", installed);
    return REPLACE_UPSTREAM;
}

int install_build_covers(const char *archs, const struct gpu_cc *gpus, const char *const *names,
                         int ngpus, char **missing)
{
    struct strbuf sb = STRBUF_INIT;
    for (int g = 0; g < ngpus; g++) {
        int runs = 0;
        for (const char *p = archs ? archs : ""; *p && !runs;) {
            size_t n = strcspn(p, ",; ");
            char word[32];
            if (n && n < sizeof word) {
                memcpy(word, p, n);
                word[n] = '\0';
                struct gpu_arch a;
                runs = arch_parse(word, &a) == 0 && arch_runs_on(&a, gpus[g].major, gpus[g].minor);
            }
            p += n + (p[n] != '\0');
        }
        if (!runs) {
            if (names && names[g])
                sb_addf(&sb, "%s%s (sm_%d%d)", sb.len ? ", " : "", names[g], gpus[g].major,
                        gpus[g].minor);
            else
                sb_addf(&sb, "%sGPU %d (sm_%d%d)", sb.len ? ", " : "", g, gpus[g].major,
                        gpus[g].minor);
        }
    }
    int all = sb.len == 0;
    if (missing)
        *missing = all ? NULL : sb_detach(&sb);
    sb_free(&sb);
    return all;
}

const char install_verify_script[] =
    "import sys\n"
    "import sageattention\n"
    "print('version\\t' + str(getattr(sageattention, '__version__', '')))\n"
    "print('file\\t' + str(getattr(sageattention, '__file__', '')))\n"
    "try:\n"
    "    import importlib.metadata as md\n"
    "    f = md.distribution('sageattention').locate_file('sageattention/__init__.py')\n"
    "    print('dist_file\\t' + str(f))\n"
    "except Exception:\n"
    "    pass\n"
    "t = sys.modules.get('torch')\n"
    "init = t is not None and hasattr(t, 'cuda') and t.cuda.is_initialized()\n"
    "print('torch_imported\\t' + ('1' if t is not None else '0'))\n"
    "print('cuda_initialized\\t' + ('1' if init else '0'))\n";

static void set_verify(void *arg, const char *key, const char *value)
{
    struct import_facts *f = arg;
    if (!strcmp(key, "version") && !f->version)
        f->version = xstrdup(value);
    else if (!strcmp(key, "file") && !f->file)
        f->file = xstrdup(value);
    else if (!strcmp(key, "dist_file") && !f->dist_file)
        f->dist_file = xstrdup(value);
    else if (!strcmp(key, "cuda_initialized"))
        f->cuda_initialized = !strcmp(value, "1");
    else if (!strcmp(key, "torch_imported"))
        f->torch_imported = !strcmp(value, "1");
}

int install_parse_verify(const char *text, struct import_facts *out)
{
    memset(out, 0, sizeof *out);
    each_line(text, set_verify, out);
    return out->version && out->file ? 0 : -1;
}

void import_facts_free(struct import_facts *f)
{
    free(f->version);
    free(f->file);
    free(f->dist_file);
    memset(f, 0, sizeof *f);
}
