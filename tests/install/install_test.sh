#!/usr/bin/env bash
# The install as a user meets it: `cmake --install BUILD --prefix P` into a
# fresh temporary prefix, then
#   1. the pieces: P/include/symc holds the public headers and nothing else,
#      P/lib has libsymc.so (a SONAME'd shared library exporting only symc_*
#      and symrt_*) and libsymc_runtime.a, P/bin/symc, the CMake package and
#      both pkg-config files; no installed CMake or .pc file names this source
#      or build tree (they must be relocatable);
#   2. an engine compiled by the installed tool (P/bin/symc compile) from the
#      example module (vit_seed);
#   3. consumers/consumer.c, outside this tree, built three ways and each run
#      on that engine (reference backend):
#      a. a CMake project with find_package(symc CONFIG REQUIRED) linking
#         symc::runtime (static; the binary must not need libsymc.so);
#      b. cc with `pkg-config --cflags --libs symc` (the shared library);
#      c. cc with `pkg-config --static --cflags --libs symc-runtime`.
# Any missing piece, failed build or failed run fails the test.
# usage: install_test.sh CMAKE BUILD_DIR SRC_DIR VIT_SEED CC TMPDIR
set -u
cmake=$1 build=$2 src=$3 vit=$4 cc=$5 tmp=$6
rm -rf "$tmp" && mkdir -p "$tmp"
P=$tmp/prefix
fail=0
bad() { fail=1; echo "FAIL: $*" >&2; }
run() { # run DESCRIPTION CMD...: fails the test (and shows the output) when CMD fails
  local what=$1; shift
  local out; out=$("$@" 2>&1) || { bad "$what: $out"; return 1; }
  [ -z "$out" ] || printf '%s\n' "$out" | tail -3
}
run "cmake --install" "$cmake" --install "$build" --prefix "$P" || { echo "install failed"; exit 1; }

# ---- 1. the pieces
for f in include/symc/symc.h include/symc/symrt.h include/symc/status.h include/symc/dtype.h include/symc/precision.h \
         include/symc/attr.h include/symc/version.h \
         lib/libsymc.so lib/libsymc_runtime.a bin/symc \
         lib/cmake/symc/symcConfig.cmake lib/cmake/symc/symcConfigVersion.cmake lib/cmake/symc/symcTargets.cmake \
         lib/pkgconfig/symc.pc lib/pkgconfig/symc-runtime.pc; do
  [ -e "$P/$f" ] || bad "not installed: $f"
done
others=$(cd "$P" && find . -name '*.h' ! -path './include/symc/*')
[ -z "$others" ] || bad "headers outside include/symc installed: $others"
internal=$(cd "$P/include/symc" && ls | grep -vxE 'symc.h|symrt.h|status.h|dtype.h|precision.h|attr.h|version.h')
[ -z "$internal" ] || bad "non-public headers installed: $internal"
[ -x "$P/bin/symc" ] || bad "bin/symc not executable"
soname=$(readelf -d "$P/lib/libsymc.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case $soname in libsymc.so.[0-9]*) ;; *) bad "libsymc.so has no versioned SONAME: '$soname'" ;; esac
exported=$(nm -D --defined-only "$P/lib/libsymc.so" | awk '{print $NF}')
[ -n "$exported" ] || bad "nm found no exported symbol in libsymc.so"
echo "$exported" | grep -q '^symrt_enqueue$' || bad "libsymc.so does not export symrt_enqueue"
echo "$exported" | grep -q '^symc_module_create$' || bad "libsymc.so does not export symc_module_create"
leaked=$(echo "$exported" | grep -vE '^(symc|symrt)_')
[ -z "$leaked" ] || bad "libsymc.so exports symbols beyond symc_*/symrt_*: $(echo $leaked | head -c 400)"
for d in "$src" "$build"; do
  hits=$(grep -rlF "$(cd "$d" && pwd -P)" "$P/lib/cmake" "$P/lib/pkgconfig")
  [ -z "$hits" ] || bad "installed package files name $d (not relocatable): $hits"
done
ar t "$P/lib/libsymc_runtime.a" | grep -q '^context.c.o$' || bad "libsymc_runtime.a lacks the runtime (context.c.o)"

# ---- 2. an engine, compiled by the installed tool
run "vit_seed" "$vit" "$tmp/vit.symir" &&
run "installed symc compile" "$P/bin/symc" compile "$tmp/vit.symir" -o "$tmp/vit.symx" ||
  { echo "no engine; cannot test the consumers" >&2; exit 1; }
shape=x:2x196x768

# ---- 3a. CMake: find_package(symc CONFIG REQUIRED), symc::runtime (static)
if run "consumer: cmake configure" "$cmake" -S "$src/tests/install/consumer" -B "$tmp/consumer-build" \
       -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$cc" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF &&
   run "consumer: cmake build" "$cmake" --build "$tmp/consumer-build"; then
  exe=$tmp/consumer-build/consumer_static
  if readelf -d "$exe" | grep -q 'NEEDED.*libsymc'; then bad "consumer_static needs libsymc.so: not static"; fi
  out=$("$exe" "$tmp/vit.symx" "$shape" 2>&1) && echo "$out" | grep -q "outputs finite" ||
    bad "consumer_static (find_package, symc::runtime) run: $out"
  echo "consumer_static: $out"
  echo "$out" | grep -q "^output .*: \[2, " || bad "consumer_static: no output of batch 2: $out"
fi

# ---- 3b. pkg-config symc: the shared library
export PKG_CONFIG_PATH=$P/lib/pkgconfig
unset PKG_CONFIG_LIBDIR
flags=$(pkg-config --cflags --libs symc) || bad "pkg-config symc failed"
if run "consumer: cc with pkg-config symc" "$cc" -std=c11 -Wall -Wextra -Werror \
       "$src/tests/install/consumer/consumer.c" -o "$tmp/consumer_shared" $flags -Wl,-rpath,"$P/lib" -lm; then
  readelf -d "$tmp/consumer_shared" | grep -q 'NEEDED.*\[libsymc\.so' || bad "consumer_shared does not link libsymc.so"
  out=$("$tmp/consumer_shared" "$tmp/vit.symx" "$shape" 2>&1) && echo "$out" | grep -q "outputs finite" ||
    bad "consumer_shared (pkg-config symc) run: $out"
  echo "consumer_shared: $out"
  ldd "$tmp/consumer_shared" | grep -qF "$P/lib/libsymc.so" || bad "consumer_shared did not load the installed libsymc.so"
fi

# ---- 3c. pkg-config --static symc-runtime: the static runtime
flags=$(pkg-config --static --cflags --libs symc-runtime) || bad "pkg-config symc-runtime failed"
if run "consumer: cc with pkg-config --static symc-runtime" "$cc" -std=c11 -Wall -Wextra -Werror \
       "$src/tests/install/consumer/consumer.c" -o "$tmp/consumer_pc_static" $flags; then
  out=$("$tmp/consumer_pc_static" "$tmp/vit.symx" "$shape" 2>&1) && echo "$out" | grep -q "outputs finite" ||
    bad "consumer_pc_static (pkg-config --static symc-runtime) run: $out"
  echo "consumer_pc_static: $out"
fi

[ "$fail" = 0 ] && echo "install: ok (prefix $P)"
exit "$fail"
