#!/usr/bin/env bash
# Builds a rankwire release into dist/VERSION/ from a clean checkout:
#
#   scripts/release.sh 0.9.0
#
# It writes, for each target (linux/amd64, linux/arm64, darwin/arm64,
# windows/amd64):
#   gateway_VERSION_OS_ARCH[.exe]        a static binary (CGO_ENABLED=0,
#                                        -trimpath), --version prints vVERSION
#   gateway_VERSION_OS_ARCH.cdx.json     its SBOM (CycloneDX 1.6, read from
#                                        the binary's own module list)
# and once:
#   rankwire-widget-VERSION.tgz          the npm package @rankwire/widget,
#                                        with LICENSE, at VERSION
#   LICENSE, NOTICE                      what redistributing the binaries needs
#   RELEASE_NOTES.md                     CHANGELOG.md's section for VERSION
#   SHA256SUMS                           the checksums of all of the above
#   container/                           the image's build context: the Linux
#                                        binaries, an empty data/ and
#                                        scripts/release.Dockerfile
#
# Environment:
#   TARGETS="linux/amd64 ..."  the targets to build (default: all four)
#   DIST=dir                   where VERSION/ goes (default: dist/ at the root)
#   RELEASE_ALLOW_DIRTY=1      build from a tree with uncommitted changes
#                              (tests do; a real release never should)
#
# CHANGELOG.md must have a section "## [VERSION]". Publishing is separate and
# manual (docs/DEPLOY.md, "Releasing"); the script prints the commands.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CYCLONEDX=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
TARGETS=${TARGETS:-"linux/amd64 linux/arm64 darwin/arm64 windows/amd64"}

die() { echo "release: $*" >&2; exit 1; }

# check_version VERSION: semver without the v (0.9.0, 1.0.0-rc.1).
check_version() {
	[[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
		die "VERSION $1 is not a semantic version such as 0.9.0 (the tag will be v0.9.0)"
	grep -q "^## \[$1\]" "$ROOT/CHANGELOG.md" ||
		die "CHANGELOG.md has no section \"## [$1]\": write it first"
}

# check_clean: a release is built from committed sources only.
check_clean() {
	[[ "${RELEASE_ALLOW_DIRTY:-}" == 1 ]] && return
	[[ -z "$(git -C "$ROOT" status --porcelain)" ]] ||
		die "the tree has uncommitted changes (git status); commit them or set RELEASE_ALLOW_DIRTY=1 for a trial"
}

# build_target OS/ARCH: the static binary and its SBOM.
build_target() {
	local os=${1%/*} arch=${1#*/} ext=""
	[[ "$os" == windows ]] && ext=.exe
	local name="gateway_${VERSION}_${os}_${arch}${ext}"
	echo "== $name"
	(cd "$ROOT" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X main.version=v$VERSION" -o "$OUT/$name" ./cmd/gateway)
	# Its log goes to a file: it reports progress on stderr, shown on failure only.
	"$TOOLS/cyclonedx-gomod" bin -json -version "v$VERSION" -output "$OUT/$name.cdx.json" "$OUT/$name" 2>"$WORK/sbom.log" ||
		{ cat "$WORK/sbom.log" >&2; die "the SBOM of $name failed"; }
	if [[ "$os" == linux ]]; then
		ln "$OUT/$name" "$OUT/container/gateway_linux_$arch" 2>/dev/null || cp "$OUT/$name" "$OUT/container/gateway_linux_$arch"
	fi
}

# pack_npm: web/static packed at VERSION, LICENSE included (npm pack runs on a
# copy: the checkout is not changed).
pack_npm() {
	echo "== npm package"
	cp -R "$ROOT/web/static" "$WORK/npm"
	cp "$ROOT/LICENSE" "$WORK/npm/LICENSE"
	(cd "$WORK/npm" && npm version "$VERSION" --no-git-tag-version --allow-same-version >/dev/null &&
		npm pack --ignore-scripts --pack-destination "$OUT" >/dev/null)
}

# release_notes: CHANGELOG.md's section for VERSION, without its heading.
release_notes() {
	awk -v v="## [$VERSION]" 'index($0, v) == 1 {on = 1; next} /^## \[/ || /^\[[^]]+\]: / {on = 0} on' \
		"$ROOT/CHANGELOG.md" >"$OUT/RELEASE_NOTES.md"
}

checksums() {
	local sum="sha256sum"
	command -v sha256sum >/dev/null || sum="shasum -a 256"
	(cd "$OUT" && find . -maxdepth 1 -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs $sum >SHA256SUMS)
}

main() {
	[[ $# -eq 1 ]] || die "usage: scripts/release.sh VERSION (for example 0.9.0)"
	VERSION=${1#v}
	check_version "$VERSION"
	check_clean
	OUT=${DIST:-$ROOT/dist}/$VERSION
	WORK=$(mktemp -d)
	TOOLS=$WORK/bin
	trap 'rm -rf "$WORK"' EXIT
	rm -rf "$OUT"
	mkdir -p "$OUT/container/data" "$TOOLS"
	echo "== $CYCLONEDX"
	GOBIN=$TOOLS go install "$CYCLONEDX"
	for target in $TARGETS; do
		build_target "$target"
	done
	cp "$ROOT/scripts/release.Dockerfile" "$OUT/container/Dockerfile"
	pack_npm
	cp "$ROOT/LICENSE" "$ROOT/NOTICE" "$OUT/"
	release_notes
	checksums
	echo "== $OUT"
	ls -l "$OUT"
	cat <<EOF

Publish (docs/DEPLOY.md, "Releasing"):
  git tag -a v$VERSION -m "rankwire $VERSION" && git push origin v$VERSION
  GOPROXY=https://proxy.golang.org go list -m github.com/rankwire/rankwire@v$VERSION
  npm publish --access public $OUT/rankwire-widget-$VERSION.tgz
  docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/rankwire/rankwire:$VERSION --push $OUT/container
  gh release create v$VERSION --title "rankwire $VERSION" --notes-file $OUT/RELEASE_NOTES.md \
    \$(find $OUT -maxdepth 1 -type f)
EOF
}

main "$@"
