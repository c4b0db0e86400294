#!/usr/bin/env python3
# Checks META.json against the PGXN Meta Spec 1.0.0 and against gpuext.control and the Makefile.
# Usage: python3 test/validate_meta.py [path/to/META.json]; exits 1 listing every problem found.
import json
import os
import re
import sys

# The spec's shortcut licenses.
LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
    "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
    "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay", "sun",
    "zlib", "open_source", "restricted", "unrestricted", "unknown",
}
TOP_KEYS = {
    "name", "version", "abstract", "maintainer", "license", "provides", "meta-spec",
    "description", "generated_by", "tags", "no_index", "prereqs", "release_status", "resources",
}
REQUIRED = ["name", "version", "abstract", "maintainer", "license", "provides", "meta-spec"]
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}
SPEC_URLS = {"https://pgxn.org/meta/spec.txt", "http://pgxn.org/meta/spec.txt"}

# Semantic Versioning, as the spec's schema has it.
SEMVER = (r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
          r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
          r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?")
SEMVER_RE = re.compile("^" + SEMVER + "$", re.ASCII)
RANGE_RE = re.compile(r"^(?:[=!]=|[<>]=?)?\s*(?:" + SEMVER + "|0)$", re.ASCII)

errors = []


# Record one problem.
def fail(where, what):
    errors.append(f"{where}: {what}")


# A Term: two characters or more, no slash, backslash, whitespace or control character.
def check_term(where, value, spaces_ok=False, max_len=None):
    if not isinstance(value, str):
        return fail(where, f"must be a string, not {json.dumps(value)}")
    if len(value) < 2:
        fail(where, f"{value!r} is shorter than two characters")
    if max_len is not None and len(value) > max_len:
        fail(where, f"{value!r} is longer than {max_len} characters")
    bad = [c for c in value
           if c in "/\\" or ord(c) < 32 or ord(c) == 127 or (c.isspace() and not spaces_ok)]
    if bad:
        fail(where, f"{value!r} contains {''.join(sorted(set(bad)))!r}")


# A non-empty string.
def check_string(where, value):
    if not isinstance(value, str) or not value:
        fail(where, f"must be a non-empty string, not {json.dumps(value)}")


# A semantic version such as 1.2.3 or 1.2.3-beta1.
def check_version(where, value):
    if not isinstance(value, str) or not SEMVER_RE.match(value):
        fail(where, f"{json.dumps(value)} is not a semantic version (X.Y.Z)")


# A version range: 0, a version, or operator-version clauses joined by commas.
def check_range(where, value):
    if value == 0 and not isinstance(value, bool):
        return
    if not isinstance(value, str) or not all(RANGE_RE.match(c.strip()) for c in value.split(",")):
        fail(where, f"{json.dumps(value)} is not a version range")


# A relative path in Unix form; must_exist checks that the distribution holds the file.
def check_path(where, value, base, must_exist=False):
    if not isinstance(value, str) or len(value) < 2:
        return fail(where, f"{json.dumps(value)} is not a path of two characters or more")
    if value.startswith("/") or "\\" in value or ".." in value.split("/"):
        fail(where, f"{value!r} is not a relative Unix path inside the distribution")
    elif must_exist and not os.path.exists(os.path.join(base, value)):
        fail(where, f"{value!r} does not exist")


# Keys that are neither known nor custom (x_ or X_).
def check_keys(where, obj, known):
    for k in obj:
        if k not in known and not re.match(r"^[xX]_.", k):
            fail(where, f"unknown key {k!r}")


# An object, or a failure naming what it was.
def is_object(where, value):
    if not isinstance(value, dict):
        fail(where, f"must be an object, not {json.dumps(value)}")
        return False
    return True


# One string or a non-empty list of unique strings.
def check_string_list(where, value, check):
    if isinstance(value, list):
        if not value:
            fail(where, "must not be an empty list")
        if len(set(map(json.dumps, value))) != len(value):
            fail(where, "has duplicate entries")
        for i, v in enumerate(value):
            check(f"{where}[{i}]", v)
    else:
        check(where, value)


# The license: a shortcut, a list of shortcuts, or an object of names to URLs.
def check_license(value):
    def shortcut(where, v):
        if v not in LICENSES:
            fail(where, f"{json.dumps(v)} is not one of the spec's licenses ({', '.join(sorted(LICENSES))})")
    if isinstance(value, dict):
        if not value:
            fail("license", "must name at least one license")
        for name, url in value.items():
            if not isinstance(url, str) or not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$", url):
                fail(f"license.{name}", f"{json.dumps(url)} is not a URI")
    else:
        check_string_list("license", value, shortcut)


# provides: extension names to their file and version.
def check_provides(value, base):
    if not is_object("provides", value):
        return
    if not value:
        fail("provides", "must name at least one extension")
    for ext, entry in value.items():
        where = f"provides.{ext}"
        check_term(f"provides key {ext!r}", ext)
        if not is_object(where, entry):
            continue
        check_keys(where, entry, {"file", "version", "abstract", "docfile", "docpath"})
        for k in ("file", "version"):
            if k not in entry:
                fail(where, f"missing required key {k!r}")
        if "file" in entry:
            check_path(f"{where}.file", entry["file"], base, must_exist=True)
        if "version" in entry:
            check_version(f"{where}.version", entry["version"])
        if "docfile" in entry:
            check_path(f"{where}.docfile", entry["docfile"], base, must_exist=True)
        for k in ("abstract", "docpath"):
            if k in entry:
                check_string(f"{where}.{k}", entry[k])


# prereqs: phases to relationships to prerequisites and their version ranges.
def check_prereqs(value):
    if not is_object("prereqs", value):
        return
    check_keys("prereqs", value, PHASES)
    for phase, rels in value.items():
        if phase not in PHASES or not is_object(f"prereqs.{phase}", rels):
            continue
        check_keys(f"prereqs.{phase}", rels, RELATIONS)
        for rel, reqs in rels.items():
            where = f"prereqs.{phase}.{rel}"
            if rel not in RELATIONS or not is_object(where, reqs):
                continue
            if not reqs:
                fail(where, "must name at least one prerequisite")
            for name, rng in reqs.items():
                check_term(f"{where} key {name!r}", name)
                check_range(f"{where}.{name}", rng)


# resources: homepage, bugtracker and repository, at least one of them.
def check_resources(value):
    if not is_object("resources", value):
        return
    check_keys("resources", value, {"homepage", "bugtracker", "repository"})
    if not {"homepage", "bugtracker", "repository"} & value.keys():
        fail("resources", "must have homepage, bugtracker or repository")
    if "homepage" in value:
        check_string("resources.homepage", value["homepage"])
    for k, allowed in (("bugtracker", {"web", "mailto"}), ("repository", {"url", "web", "type"})):
        if k in value and is_object(f"resources.{k}", value[k]):
            check_keys(f"resources.{k}", value[k], allowed)
            for sub, v in value[k].items():
                check_string(f"resources.{k}.{sub}", v)


# The extension's version in gpuext.control and the Makefile, which META.json must match.
def check_project_versions(meta, base):
    control = os.path.join(base, "gpuext.control")
    makefile = os.path.join(base, "Makefile")
    try:
        with open(control) as f:
            m = re.search(r"^\s*default_version\s*=\s*'([^']*)'", f.read(), re.M)
        with open(makefile) as f:
            mk = re.search(r"^EXTVERSION\s*[:?]?=\s*(\S+)", f.read(), re.M)
    except OSError as e:
        return fail("project", f"cannot read {e.filename}: {e.strerror}")
    if not m:
        return fail("gpuext.control", "has no default_version")
    if not mk:
        return fail("Makefile", "has no EXTVERSION")
    ctl = m.group(1)
    if mk.group(1) != ctl:
        fail("Makefile", f"EXTVERSION {mk.group(1)} is not gpuext.control's default_version {ctl}")
    # 0.2 in the control file is 0.2.0 in semantic versioning.
    semver = ctl + ".0" * (2 - ctl.count(".")) if re.match(r"^\d+(\.\d+){0,2}$", ctl) else ctl
    versions = [("version", meta.get("version"))]
    provides = meta.get("provides")
    if isinstance(provides, dict):
        if not isinstance(provides.get("gpuext"), dict):
            fail("provides", "does not provide the gpuext extension")
        else:
            versions.append(("provides.gpuext.version", provides["gpuext"].get("version")))
    for where, v in versions:
        if v is not None and v != semver:
            fail(where, f"{v} does not match gpuext.control's default_version {ctl} (expected {semver})")


# Every rule of the spec that applies to META.json, then the project's own versions.
def validate(path):
    base = os.path.dirname(os.path.abspath(path))
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        return fail(path, f"cannot be read as JSON: {e}")
    if not is_object("META.json", meta):
        return

    for k in REQUIRED:
        if k not in meta:
            fail("META.json", f"missing required key {k!r}")
    check_keys("META.json", meta, TOP_KEYS)

    spec = meta.get("meta-spec")
    if spec is not None and is_object("meta-spec", spec):
        check_keys("meta-spec", spec, {"version", "url"})
        if spec.get("version") != "1.0.0":
            fail("meta-spec.version", f"{json.dumps(spec.get('version'))} is not \"1.0.0\"")
        if "url" in spec and spec["url"] not in SPEC_URLS:
            fail("meta-spec.url", f"{json.dumps(spec['url'])} is not the spec's URL")

    if "name" in meta:
        check_term("name", meta["name"])
    if "version" in meta:
        check_version("version", meta["version"])
    for k in ("abstract", "description", "generated_by"):
        if k in meta:
            check_string(k, meta[k])
    if "maintainer" in meta:
        check_string_list("maintainer", meta["maintainer"], check_string)
    if "license" in meta:
        check_license(meta["license"])
    if "provides" in meta:
        check_provides(meta["provides"], base)
    if "prereqs" in meta:
        check_prereqs(meta["prereqs"])
    if "tags" in meta:
        if not isinstance(meta["tags"], list):
            fail("tags", "must be a list")
        else:
            check_string_list("tags", meta["tags"], lambda w, v: check_term(w, v, spaces_ok=True, max_len=255))
    if "no_index" in meta and is_object("no_index", meta["no_index"]):
        check_keys("no_index", meta["no_index"], {"file", "directory"})
        if not {"file", "directory"} & meta["no_index"].keys():
            fail("no_index", "must have file or directory")
        for k in ("file", "directory"):
            if k in meta["no_index"]:
                check_string_list(f"no_index.{k}", meta["no_index"][k], lambda w, v: check_path(w, v, base))
    if "release_status" in meta and meta["release_status"] not in ("stable", "testing", "unstable"):
        fail("release_status", f"{json.dumps(meta['release_status'])} is not stable, testing or unstable")
    if "resources" in meta:
        check_resources(meta["resources"])

    check_project_versions(meta, base)


if __name__ == "__main__":
    if len(sys.argv) > 2:
        sys.exit("usage: validate_meta.py [META.json]")
    target = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                   "..", "META.json")
    validate(target)
    if errors:
        for e in errors:
            print(f"META.json: invalid: {e}", file=sys.stderr)
        sys.exit(1)
    print("META.json: valid (PGXN Meta Spec 1.0.0)")
