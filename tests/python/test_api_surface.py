"""The drop-in's public API against upstream SageAttention 2.2.0's.

tests/python/fixtures/upstream_api.json was written by hand from upstream's source (which files and
commits are recorded in it). This test imports share/python/sageattention in a fresh interpreter in
which torch, triton and numpy cannot be imported (CI has none of them, and a user's `import
sageattention` must not need them before the first call), reads every public function's
inspect.signature there, and checks that each upstream parameter is present with the same name,
position, kind and default, that **kwargs is accepted, and that the calls ComfyUI and KJNodes make
bind to the same parameters as they do upstream.

Extra parameters are allowed only where no upstream call can reach them by position: keyword-only,
with a default. Where upstream changed a signature without changing its version (2.2.0), the
fixture records both revisions and either is accepted.
"""
import inspect
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PACKAGE_PARENT = os.path.join(ROOT, "share", "python")
PACKAGE_DIR = os.path.join(PACKAGE_PARENT, "sageattention")
FIXTURE = os.path.join(HERE, "fixtures", "upstream_api.json")

# Runs in a child interpreter: hides torch/triton/numpy, imports the package, prints what it exports.
PROBE = r"""
import importlib.abc, inspect, json, sys

HIDDEN = ("torch", "triton", "numpy")


class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError("No module named %r (hidden by test_api_surface)" % name,
                                      name=name)
        return None


sys.meta_path.insert(0, Hide())
sys.path.insert(0, sys.argv[1])
import sageattention as m


def encode(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    return {"repr": repr(value)}


out = {"version": getattr(m, "__version__", None), "all": getattr(m, "__all__", None),
       "file": getattr(m, "__file__", None), "functions": {},
       "hidden_modules_loaded": sorted(n for n in sys.modules if n.split(".")[0] in HIDDEN)}
for name in json.loads(sys.argv[2]):
    f = getattr(m, name, None)
    if f is None or not callable(f):
        out["functions"][name] = None
        continue
    params = []
    for p in inspect.signature(f).parameters.values():
        e = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            e["default"] = encode(p.default)
        params.append(e)
    out["functions"][name] = params
print(json.dumps(out))
"""


def load_fixture():
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)


def probe_package(names):
    """Imports the package in a child with torch hidden; returns (returncode, stdout, stderr)."""
    env = dict(os.environ)
    # As in a fresh environment: no development override, and no __pycache__ in the source tree.
    for var in ("SAGEATTENTION_LIBRARY", "SAGEATTENTION_RECOMMENDATION"):
        env.pop(var, None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    r = subprocess.run([sys.executable, "-c", PROBE, PACKAGE_PARENT, json.dumps(names)],
                       capture_output=True, text=True, env=env, timeout=120)
    return r.returncode, r.stdout, r.stderr


def fixture_signature(params):
    """An inspect.Signature built from the fixture's parameter list."""
    return inspect.Signature([
        inspect.Parameter(p["name"], getattr(inspect.Parameter, p["kind"]),
                          default=p["default"] if "default" in p else inspect.Parameter.empty)
        for p in params])


def probed_signature(params):
    """An inspect.Signature rebuilt from what the child saw (a non-JSON default stays its repr)."""
    out = []
    for p in params:
        d = inspect.Parameter.empty
        if "default" in p:
            d = p["default"].get("value", p["default"].get("repr"))
        out.append(inspect.Parameter(p["name"], getattr(inspect.Parameter, p["kind"]), default=d))
    return inspect.Signature(out)


def describe(p):
    s = "%s (%s" % (p["name"], p["kind"])
    if "default" in p:
        d = p["default"]
        if isinstance(d, dict):  # probed form
            d = d["value"] if "value" in d else "<%s>" % d["repr"]
        s += ", default %r" % (d,)
    return s + ")"


def signature_differences(upstream, ours):
    """Every way `ours` (probed form) departs from `upstream` (fixture form); [] when it matches."""
    problems = []
    want = [p for p in upstream if p["kind"] != "VAR_KEYWORD"]
    if len(ours) < len(want):
        problems.append("has %d parameters before **kwargs, upstream has %d" % (len(ours), len(want)))
    for i, up in enumerate(want):
        if i >= len(ours):
            problems.append("missing parameter %d: %s" % (i, describe(up)))
            continue
        got = ours[i]
        if got["name"] != up["name"] or got["kind"] != up["kind"]:
            problems.append("parameter %d is %s, upstream has %s" % (i, describe(got), describe(up)))
            continue
        if ("default" in up) != ("default" in got):
            problems.append("parameter %s: default %s, upstream %s" % (
                up["name"], "present" if "default" in got else "absent",
                "present" if "default" in up else "absent"))
        elif "default" in up:
            d = got["default"]
            if "value" not in d or d["value"] != up["default"] or \
                    type(d["value"]) is not type(up["default"]):
                problems.append("parameter %s: default %s, upstream %r" % (
                    up["name"], describe(got).split("default ", 1)[-1].rstrip(")"), up["default"]))
    for extra in ours[len(want):]:
        if extra["kind"] == "VAR_KEYWORD":
            continue
        if extra["kind"] != "KEYWORD_ONLY" or "default" not in extra:
            problems.append("extra parameter %s: only keyword-only parameters with a default may be "
                            "added (an upstream call could otherwise bind to it)" % describe(extra))
    if not ours or ours[-1]["kind"] != "VAR_KEYWORD":
        problems.append("does not end with **kwargs: upstream accepts and ignores unknown options "
                        "(ComfyUI passes attn_mask=)")
    return problems


@unittest.skipUnless(os.path.isdir(PACKAGE_DIR),
                     "the drop-in package is not in this tree yet (%s)" % PACKAGE_DIR)
class ApiSurface(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fixture = load_fixture()
        cls.names = sorted(cls.fixture["functions"])
        cls.rc, out, cls.stderr = probe_package(cls.names)
        cls.probe = json.loads(out) if cls.rc == 0 and out.strip() else None

    def require_probe(self):
        if self.probe is None:
            self.fail("`import sageattention` failed with torch, triton and numpy hidden "
                      "(exit %d):\n%s" % (self.rc, self.stderr[-3000:]))

    def test_imports_without_torch(self):
        self.require_probe()
        self.assertEqual(self.probe["hidden_modules_loaded"], [])
        self.assertEqual(os.path.dirname(os.path.realpath(self.probe["file"])),
                         os.path.realpath(PACKAGE_DIR), "imported a different sageattention")

    def test_version_names_this_implementation(self):
        self.require_probe()
        v = self.probe["version"]
        self.assertIsInstance(v, str)
        # A bare upstream version would make `pip list` and bug reports lie about what is installed.
        self.assertNotRegex(v, r"^\d+(\.\d+)*$", "__version__ %r looks like upstream's" % v)

    def test_every_upstream_function_is_exported(self):
        self.require_probe()
        missing = [n for n in self.names if self.probe["functions"].get(n) is None]
        self.assertEqual(missing, [], "not exported (or not callable)")
        if self.probe["all"] is not None:
            self.assertEqual(sorted(set(self.names) - set(self.probe["all"])), [],
                             "missing from __all__")

    def revisions(self, name):
        """Every upstream 2.2.0 parameter list recorded for `name`, the latest first."""
        return [self.fixture["functions"][name]] + [
            r["parameters"] for r in self.fixture.get("earlier_revisions", {}).get(name, [])]

    def matched_revision(self, name, ours):
        """The recorded revision `ours` matches (the latest when it matches none)."""
        for params in self.revisions(name):
            if not signature_differences(params, ours):
                return params
        return self.fixture["functions"][name]

    def test_signatures_match_upstream(self):
        self.require_probe()
        for name in self.names:
            with self.subTest(function=name):
                ours = self.probe["functions"].get(name)
                if ours is None:
                    self.fail("%s is not exported" % name)
                problems = [signature_differences(params, ours)
                            for params in self.revisions(name)]
                if all(problems):
                    self.fail("%s departs from upstream 2.2.0: %s" % (name, "; or, against an "
                              "earlier revision: ".join("; ".join(p) for p in problems)))

    def test_upstream_calls_bind_the_same(self):
        """The calls ComfyUI, KJNodes and positional callers make reach the same parameters."""
        self.require_probe()
        for call in self.fixture["call_patterns"]:
            name = call["function"]
            with self.subTest(caller=call["who"]):
                ours = self.probe["functions"].get(name)
                if ours is None:
                    self.fail("%s is not exported" % name)
                up = fixture_signature(self.matched_revision(name, ours)).bind(
                    *call["args"], **call["kwargs"])
                try:
                    got = probed_signature(ours).bind(*call["args"], **call["kwargs"])
                except TypeError as e:
                    self.fail("%s(%s) does not bind: %s" % (name, call, e))
                up.apply_defaults()
                got.apply_defaults()
                for pname, value in up.arguments.items():
                    if pname == "kwargs":
                        continue
                    self.assertIn(pname, got.arguments, "%s lost parameter %s" % (name, pname))
                    self.assertEqual(got.arguments[pname], value,
                                     "%s: %s bound differently" % (name, pname))


class Fixture(unittest.TestCase):
    """The fixture itself: a broken or emptied fixture must not pass silently."""

    def test_fixture_is_complete(self):
        fx = load_fixture()
        self.assertEqual(fx["upstream_version"], "2.2.0")
        self.assertEqual(sorted(fx["functions"]), sorted([
            "sageattn", "sageattn_qk_int8_pv_fp16_triton", "sageattn_varlen",
            "sageattn_qk_int8_pv_fp16_cuda", "sageattn_qk_int8_pv_fp8_cuda",
            "sageattn_qk_int8_pv_fp8_cuda_sm90"]))
        everything = list(fx["functions"].items()) + [
            (name, r["parameters"]) for name, revs in fx.get("earlier_revisions", {}).items()
            for r in revs]
        for name, params in everything:
            with self.subTest(function=name):
                self.assertEqual([p["name"] for p in params[:3]], ["q", "k", "v"])
                self.assertEqual(params[-1]["kind"], "VAR_KEYWORD")
                fixture_signature(params)  # raises on a misordered default or a bad kind
        self.assertTrue(all(s.get("read_for") for s in fx["sources"]))

    def test_checker_catches_a_changed_default(self):
        """signature_differences sees a default, an order and a kind change (so it can fail)."""
        fx = load_fixture()
        up = fx["functions"]["sageattn_qk_int8_pv_fp8_cuda"]

        def probed(params):
            return [dict(p, default={"value": p["default"]}) if "default" in p else dict(p)
                    for p in params]
        self.assertEqual(signature_differences(up, probed(up)), [])
        changed = probed(up)
        changed[7]["default"] = {"value": "fp32+fp32"}
        self.assertEqual(len(signature_differences(up, changed)), 1)
        swapped = probed(up)
        swapped[3], swapped[4] = swapped[4], swapped[3]
        self.assertEqual(len(signature_differences(up, swapped)), 2)
        positional_extra = probed(up)[:-1] + [
            {"name": "attn_mask", "kind": "POSITIONAL_OR_KEYWORD", "default": {"value": None}},
            {"name": "kwargs", "kind": "VAR_KEYWORD"}]
        self.assertEqual(len(signature_differences(up, positional_extra)), 1)
        keyword_extra = probed(up)[:-1] + [
            {"name": "attn_mask", "kind": "KEYWORD_ONLY", "default": {"value": None}},
            {"name": "kwargs", "kind": "VAR_KEYWORD"}]
        self.assertEqual(signature_differences(up, keyword_extra), [])
        self.assertEqual(len(signature_differences(up, probed(up)[:-1])), 1)


if __name__ == "__main__":
    unittest.main()
