#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks what the shared C++ libraries export against the public headers.

  check_exports.py --lib-dir DIR --include-dir DIR [--include-dir DIR ...] [--nm NM]

For every libhurray*.so in DIR but the C ABI's libhurray_c (tests/c/check_exports.cmake
checks that one against hurray.h), lists the dynamic symbols it defines and checks each
one of namespace hurray (functions, variables, vtables, typeinfo):

  * none lies in a `detail` namespace or an anonymous one, and none is a member of a
    private implementation (`X::Impl`, whose members no header declares, although it
    takes its visibility from the exported `X`): what a library exports is public API,
    and public API is what its headers declare;
  * every name that makes up its qualified name (namespaces, classes, the function),
    template arguments and parameters left out, is a word of the headers under the
    include directories: an exported symbol that no installed header declares is an
    internal class or function that escaped -fvisibility=hidden.

Symbols of other namespaces (the standard library's and Asio's template instances,
instantiated with our types) are counted but not checked: their visibility follows
their template arguments, and no header of ours declares them.

Prints every exported hurray symbol's qualified name with the library, then the
totals; exits 1 and lists the offenders when a check fails.
"""

import argparse
import pathlib
import re
import subprocess
import sys

_PREFIXES = (
    "vtable for ",
    "typeinfo for ",
    "typeinfo name for ",
    "guard variable for ",
    "VTT for ",
    "construction vtable for ",
    "non-virtual thunk to ",
    "virtual thunk to ",
    "covariant return thunk to ",
    "TLS init function for ",
    "TLS wrapper function for ",
)


def strip_brackets(text: str, open_char: str, close_char: str) -> str:
    """`text` without every balanced `open_char ... close_char` group."""
    out = []
    depth = 0
    for ch in text:
        if ch == open_char:
            depth += 1
        elif ch == close_char and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def qualified_name(symbol: str) -> str:
    """The qualified name of a demangled symbol: no prefix, template arguments,
    parameters, qualifiers or return type ("hurray::KvMetadata::set")."""
    for prefix in _PREFIXES:
        if symbol.startswith(prefix):
            symbol = symbol[len(prefix):]
    # operator() and operator<, operator<< ... keep their name whole.
    symbol = re.sub(r"operator(\(\)|\[\]|<<=?|>>=?|<=>|<=?|>=?|->\*?|[-+*/%^&|~!=,]=?|&&|\|\||\+\+|--)",
                    "operator", symbol)
    symbol = re.sub(r"\[abi:[A-Za-z0-9_]+\]", "", symbol)
    symbol = strip_brackets(symbol, "(", ")")
    symbol = strip_brackets(symbol, "<", ">")
    # A template function's return type comes first ("hurray::Result<T> hurray::f<...>(...)").
    symbol = symbol.strip().split(" ")[-1] if " " in symbol.strip() else symbol.strip()
    return symbol


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib-dir", required=True, type=pathlib.Path)
    parser.add_argument("--include-dir", required=True, action="append", type=pathlib.Path)
    parser.add_argument("--nm", default="nm")
    parser.add_argument("--quiet", action="store_true", help="print only the totals and the offenders")
    args = parser.parse_args()

    words = set()
    headers = 0
    for include_dir in args.include_dir:
        for header in sorted(include_dir.rglob("*.h*")):
            if header.suffix in (".h", ".hpp"):
                headers += 1
                words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", header.read_text(encoding="utf-8")))
    if headers == 0:
        print(f"no headers under {[str(d) for d in args.include_dir]}", file=sys.stderr)
        return 1

    libraries = sorted(p for p in args.lib_dir.glob("libhurray*.so") if p.name != "libhurray_c.so")
    if not libraries:
        print(f"no shared libhurray*.so in {args.lib_dir}", file=sys.stderr)
        return 1

    failures = []
    total = 0
    for library in libraries:
        out = subprocess.run([args.nm, "-D", "--defined-only", "-C", str(library)],
                             check=True, capture_output=True, text=True).stdout
        ours = 0
        others = 0
        for line in out.splitlines():
            parts = line.split(" ", 2)
            if len(parts) < 3:
                continue
            symbol = parts[2]
            name = qualified_name(symbol)
            if not name.startswith("hurray::"):
                others += 1
                continue
            ours += 1
            if not args.quiet:
                print(f"{library.name}: {name}")
            components = [c for c in name.split("::") if c]
            if "detail" in components or "{anonymous}" in name or "(anonymous namespace)" in symbol:
                failures.append(f"{library.name}: {symbol}: internal namespace")
                continue
            if "Impl" in components[:-1]:
                # A pimpl's members: the header names the class, never what it holds.
                failures.append(f"{library.name}: {symbol}: a member of a private implementation")
                continue
            missing = [c.lstrip("~") for c in components if c.lstrip("~") not in words and c != "operator"]
            if missing:
                failures.append(f"{library.name}: {symbol}: {', '.join(missing)} is in no installed header")
        print(f"{library.name}: {ours} symbols of namespace hurray checked; "
              f"{others} others (template instances of other libraries)")
        total += ours
    if failures:
        print(f"{len(failures)} exported symbols are not public API:", file=sys.stderr)
        for failure in failures:
            print("  " + failure, file=sys.stderr)
        return 1
    print(f"{total} exported symbols in {len(libraries)} libraries, checked against {headers} headers: "
          "none internal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
