#include "all/call.h"
#include "util/json.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char all_call_script[] =
    "import json, sys\n"
    "def out(d):\n"
    "    print(json.dumps(d))\n"
    "    sys.stdout.flush()\n"
    "try:\n"
    "    import torch\n"
    "    import torch.nn.functional as F\n"
    "except Exception as e:\n"
    "    out({'skipped': 'torch does not import in this python (%s: %s)' % (type(e).__name__, "
    "e)})\n"
    "    sys.exit(0)\n"
    "if not torch.cuda.is_available():\n"
    "    out({'skipped': 'torch %s sees no CUDA GPU' % torch.__version__})\n"
    "    sys.exit(0)\n"
    "try:\n"
    "    import sageattention\n"
    "except Exception as e:\n"
    "    out({'import_error': ('%s: %s' % (type(e).__name__, e)).replace('\\n', ' ')[:600]})\n"
    "    sys.exit(0)\n"
    "out({'version': str(sageattention.__version__)})\n"
    "B, H, L, D = 1, 24, 4096, 128\n"
    "def median_ms(fn, reps=20):\n"
    "    for _ in range(3):\n"
    "        fn()\n"
    "    torch.cuda.synchronize()\n"
    "    times = []\n"
    "    for _ in range(reps):\n"
    "        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
    "        s.record(); fn(); e.record(); e.synchronize()\n"
    "        times.append(s.elapsed_time(e))\n"
    "    return sorted(times)[len(times) // 2]\n"
    "def accuracy(o, ref):\n"
    "    o, r = o.double().flatten(), ref.double().flatten()\n"
    "    cos = float(F.cosine_similarity(o, r, dim=0))\n"
    "    return cos, float((o - r).abs().sum() / r.abs().sum())\n"
    "for i in range(torch.cuda.device_count()):\n"
    "    rec = {'gpu': i, 'name': torch.cuda.get_device_name(i),\n"
    "           'cc': '%d.%d' % torch.cuda.get_device_capability(i), 'shape': [B, H, L, D]}\n"
    "    try:\n"
    "        dev = torch.device('cuda', i)\n"
    "        with torch.cuda.device(dev):\n"
    "            g = torch.Generator(device=dev).manual_seed(0)\n"
    "            q, k, v = (torch.randn(B, H, L, D, device=dev, dtype=torch.float16, generator=g)\n"
    "                       for _ in range(3))\n"
    "            ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float())\n"
    "            o = sageattention.sageattn(q, k, v, tensor_layout='HND', is_causal=False)\n"
    "            rec['finite'] = bool(torch.isfinite(o).all())\n"
    "            rec['sage_cos'], rec['sage_rel_l1'] = accuracy(o, ref)\n"
    "            rec['sdpa_cos'], rec['sdpa_rel_l1'] = accuracy(F.scaled_dot_product_attention(q, "
    "k, v), ref)\n"
    "            del ref\n"
    "            rec['sage_ms'] = median_ms(lambda: sageattention.sageattn(q, k, v, "
    "tensor_layout='HND'))\n"
    "            rec['sdpa_ms'] = median_ms(lambda: F.scaled_dot_product_attention(q, k, v))\n"
    "    except Exception as e:\n"
    "        rec['error'] = ('%s: %s' % (type(e).__name__, e)).replace('\\n', ' ')[:600]\n"
    "    out(rec)\n";

static void read_gpu(const cJSON *o, struct call_gpu *g)
{
    memset(g, 0, sizeof *g);
    g->index = (int)json_num(o, "gpu");
    g->name = json_strdup(o, "name");
    g->cc = json_strdup(o, "cc");
    g->error = json_strdup(o, "error");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(o, "shape");
    int *dims[4] = {&g->b, &g->h, &g->l, &g->d};
    for (int i = 0; i < 4 && cJSON_GetArraySize(shape) == 4; i++) {
        const cJSON *x = cJSON_GetArrayItem(shape, i);
        *dims[i] = cJSON_IsNumber(x) ? x->valueint : 0;
    }
    g->sage_ms = json_num(o, "sage_ms");
    g->sdpa_ms = json_num(o, "sdpa_ms");
    g->sage_cos = json_num(o, "sage_cos");
    g->sage_rel_l1 = json_num(o, "sage_rel_l1");
    g->sdpa_cos = json_num(o, "sdpa_cos");
    g->sdpa_rel_l1 = json_num(o, "sdpa_rel_l1");
    g->finite = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "finite"));
}

int all_parse_call(const char *text, struct call_report *out, char **error)
{
    memset(out, 0, sizeof *out);
    int ours = 0;
    for (const char *line = text ? text : ""; *line;) {
        size_t len = strcspn(line, "\n");
        char *one = xstrndup(line, len);
        cJSON *o = one[0] == '{' ? cJSON_Parse(one) : NULL;
        free(one);
        if (cJSON_IsObject(o)) {
            if (cJSON_GetObjectItemCaseSensitive(o, "import_error")) {
                free(out->import_error);
                out->import_error = json_strdup(o, "import_error");
                ours = 1;
            } else if (cJSON_GetObjectItemCaseSensitive(o, "skipped")) {
                free(out->skipped);
                out->skipped = json_strdup(o, "skipped");
                ours = 1;
            } else if (cJSON_GetObjectItemCaseSensitive(o, "version") &&
                       !cJSON_GetObjectItemCaseSensitive(o, "gpu")) {
                free(out->version);
                out->version = json_strdup(o, "version");
                ours = 1;
            } else if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "gpu")) &&
                       out->ngpus < CALL_MAX_GPUS) {
                read_gpu(o, &out->gpus[out->ngpus++]);
                ours = 1;
            }
        }
        cJSON_Delete(o);
        line += len + (line[len] == '\n');
    }
    if (!ours) {
        *error = xstrdup("the call printed none of its result lines");
        return -1;
    }
    return 0;
}

void all_call_report_free(struct call_report *r)
{
    free(r->skipped);
    free(r->import_error);
    free(r->version);
    for (int i = 0; i < r->ngpus; i++) {
        free(r->gpus[i].name);
        free(r->gpus[i].cc);
        free(r->gpus[i].error);
    }
    memset(r, 0, sizeof *r);
}

char *all_call_line(const struct call_gpu *g, enum call_verdict *verdict)
{
    struct strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "GPU %d %s", g->index, g->name ? g->name : "?");
    if (g->error) {
        *verdict = CALL_FAIL;
        sb_addf(&sb, ": sageattn raised %s", g->error);
        return sb_detach(&sb);
    }
    if (!g->finite || isnan(g->sage_cos)) {
        *verdict = CALL_FAIL;
        sb_addf(&sb, ": sageattn returned non-finite values");
        return sb_detach(&sb);
    }
    *verdict =
        g->sage_cos >= CALL_MIN_COS && g->sage_rel_l1 <= CALL_MAX_REL_L1 ? CALL_OK : CALL_WARN;
    sb_addf(&sb, ", B%d H%d L%d D%d fp16: sageattn", g->b, g->h, g->l, g->d);
    if (!isnan(g->sage_ms))
        sb_addf(&sb, " %.3f ms", g->sage_ms);
    sb_addf(&sb, " (cos %.6f, rel-L1 %.4f)", g->sage_cos, g->sage_rel_l1);
    if (!isnan(g->sdpa_ms))
        sb_addf(&sb, ", torch SDPA %.3f ms", g->sdpa_ms);
    if (!isnan(g->sdpa_cos))
        sb_addf(&sb, " (cos %.6f, rel-L1 %.4f)", g->sdpa_cos, g->sdpa_rel_l1);
    if (!isnan(g->sage_ms) && !isnan(g->sdpa_ms) && g->sage_ms > 0 && g->sdpa_ms > 0) {
        if (g->sdpa_ms < g->sage_ms)
            sb_addf(&sb, ": SDPA is %.2fx faster than sageattn on this GPU",
                    g->sage_ms / g->sdpa_ms);
        else
            sb_addf(&sb, ": sageattn is %.2fx faster than SDPA", g->sdpa_ms / g->sage_ms);
    }
    if (*verdict == CALL_WARN)
        sb_addf(&sb, "; below the accuracy bar (cos >= %.3f, rel-L1 <= %.2f)", CALL_MIN_COS,
                CALL_MAX_REL_L1);
    return sb_detach(&sb);
}
