#include "env_toolkit.h"
#include "all/stages.h"
#include "probe/cuda_home.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

#define ENV_DOCTOR_TIMEOUT_MS (60 * 1000)

/* The fix for a toolkit that does not fit: fetch the release this python's torch needs, then
 * point at it, both for the same python. */
static char *fetch_then_env_fix(const char *python)
{
    if (!python)
        return xstrdup("sagebuild fetch-cuda   (then: eval \"$(sagebuild env)\")");
    char *py = shell_quote(python);
    char *fix = xasprintf("sagebuild fetch-cuda --python %s   (then: eval \"$(sagebuild env "
                          "--python %s)\")",
                          py, py);
    free(py);
    return fix;
}

void env_toolkit_probe(const char *python, struct env_toolkit *t)
{
    memset(t, 0, sizeof *t);
    struct cuda_home h;
    probe_cuda_home(NULL, &h);
    if (!h.path) {
        t->why = xstrdup("no toolkit was fetched, and torch's rules ($CUDA_HOME, $CUDA_PATH, nvcc "
                         "on PATH, /usr/local/cuda) find none");
        t->fix = fetch_then_env_fix(python);
        cuda_home_free(&h);
        return;
    }
    t->prefix = xstrdup(h.path);
    t->rule = xstrdup(cuda_home_rule_name(h.rule));
    cuda_home_free(&h);

    char *self = fs_realpath("/proc/self/exe");
    const char *argv[] = {
        self ? self : "sagebuild", "doctor", "toolkit", "--json", NULL, NULL, NULL};
    if (python) { /* whether the toolkit fits is a question about this python's torch */
        argv[4] = "--python";
        argv[5] = python;
    }
    struct proc_opts po = {.timeout_ms = ENV_DOCTOR_TIMEOUT_MS, .max_output = 4u << 20};
    struct proc_result pr;
    proc_run(argv, &po, &pr);
    free(self);
    struct doctor_summary d;
    char *err = NULL;
    if (!pr.started || pr.timed_out || pr.signaled) {
        char *desc = proc_describe(&pr);
        t->why = xasprintf("the doctor's toolkit checks %s", desc);
        free(desc);
        t->fix = xstrdup("sagebuild doctor toolkit");
    } else if (all_read_doctor(pr.out, pr.exit_code, 0, &d, &err) < 0) {
        t->why = err;
        t->fix = xstrdup("sagebuild doctor toolkit");
    } else {
        const struct finding *f = NULL;
        for (int i = 0; i < d.nfindings && !f; i++)
            if (d.findings[i].action == FINDING_FETCH)
                f = &d.findings[i];
        t->fits = f == NULL;
        if (f) {
            t->why = xasprintf("%s: %s", f->id ? f->id : "toolkit",
                               f->summary ? f->summary : "does not fit");
            t->fix = fetch_then_env_fix(python);
        }
        all_doctor_summary_free(&d);
    }
    proc_result_free(&pr);
}

void env_toolkit_free(struct env_toolkit *t)
{
    free(t->prefix);
    free(t->rule);
    free(t->why);
    free(t->fix);
    memset(t, 0, sizeof *t);
}
