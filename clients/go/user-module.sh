#!/usr/bin/env bash
# Builds a user's main.go as a Go module that depends on this client the
# way the README says (require + replace to the repository path), offline:
# the module proxy is out of reach, so the third-party packages come from
# Debian's sources in /usr/share/gocode, copied into a vendor/ tree that is
# made here, in the scratch folder, never in the repository.
#
#   bash clients/go/user-module.sh path/to/main.go OUT   # writes OUT/firstlock
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
main="$1" out="$2"
module="github.com/redlockd/redlockd/clients/go"
gocode=/usr/share/gocode/src
mkdir -p "$out"
cp "$main" "$out/main.go"
cat >"$out/go.mod" <<EOF
module example.com/firstlock

go 1.19

require $module v0.0.0

replace $module => $here
EOF

# The packages main.go needs, found in GOPATH mode (this client linked in).
gopath="$out/gopath"
mkdir -p "$gopath/src/$(dirname "$module")" "$gopath/src/example.com/firstlock"
ln -s "$here" "$gopath/src/$module"
cp "$main" "$gopath/src/example.com/firstlock/"
deps="$(cd "$gopath/src/example.com/firstlock" &&
  GO111MODULE=off GOPATH="$gopath:$gocode/.." go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' . | grep -v '^example.com/')"

# vendor/: each package's files, and modules.txt naming its module.
{
  echo "# $module v0.0.0 => $here"
  echo "## explicit; go $(awk '$1 == "go" { print $2; exit }' "$here/go.mod")"
  echo "$deps" | grep "^$module"
} >"$out/modules.txt"
declare -A packages_of
for package in $deps; do
  case "$package" in "$module"*)
    mkdir -p "$out/vendor/$package"
    find "$here/${package#"$module"}" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$out/vendor/$package/" \;
    continue ;;
  esac
  # Its module: the nearest folder up with a go.mod.
  root="$package"
  until [ -f "$gocode/$root/go.mod" ] || [ "$root" = . ]; do root="$(dirname "$root")"; done
  [ "$root" != . ] || { echo "user-module.sh: no module holds $package in $gocode" >&2; exit 1; }
  packages_of[$root]+="$package"$'\n'
  mkdir -p "$out/vendor/$package"
  find "$gocode/$package" -maxdepth 1 -type f ! -name '*_test.go' -exec cp {} "$out/vendor/$package/" \;
done
# As `go mod tidy` would, go.mod names every module that provides a
# package (// indirect); the version only labels Debian's copy.
for root in $(printf '%s\n' "${!packages_of[@]}" | sort); do
  echo "# $root v0.0.0-debian"
  # Its go directive sets the language version its files are built with.
  echo "## explicit; go $(awk '$1 == "go" { print $2; exit }' "$gocode/$root/go.mod")"
  printf '%s' "${packages_of[$root]}"
  echo "require $root v0.0.0-debian // indirect" >>"$out/go.mod"
done >>"$out/modules.txt"
echo "# $module => $here" >>"$out/modules.txt" # the replace line, version-less as in go.mod
mv "$out/modules.txt" "$out/vendor/modules.txt"

(cd "$out" && GO111MODULE=on GOFLAGS=-mod=vendor GOPROXY=off GOPATH="$out/modcache" go build -o "$out/firstlock" .)
