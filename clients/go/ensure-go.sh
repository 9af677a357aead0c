#!/usr/bin/env bash
# Installs, when missing, Debian's packages the Go client is built and
# checked with, offline from the module proxy: Go 1.19, the sources of
# grpc-go 1.33, google.golang.org/protobuf 1.28, genproto and
# golang/protobuf 1.5 (under /usr/share/gocode), protoc and its Go plugins.
# Quick when they are installed. Used by test.sh and examples/go/run.sh.
set -euo pipefail
packages=(golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-google-genproto-dev
  golang-github-golang-protobuf-1-5-dev protobuf-compiler protoc-gen-go protoc-gen-go-grpc)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "clients/go/ensure-go.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null ||
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; }
