#!/bin/sh
# Usage: plugin-rust.sh NEED DIR. When the installed rustc is older than
# NEED (e.g. 1.88), unpacks the newest rustc-web Debian serves into DIR
# with wrappers DIR/bin/rustc and DIR/bin/cargo that use its own sysroot.
set -eu
need=$1 dir=$2
have=$(rustc -V | cut -d' ' -f2)
if dpkg --compare-versions "$have" ge "$need"; then
    echo "rustc $have builds the plugin (needs $need)"
    exit 0
fi
version=$(apt-cache madison rustc-web | awk 'NR == 1 { print $3 }')
upstream=${version%%+*}
if dpkg --compare-versions "$upstream" lt "$need"; then
    echo "no rustc-web >= $need in the package lists (newest: $version)" >&2
    exit 1
fi
short=$(echo "$upstream" | cut -d. -f1,2)
# Installing the newer compiler's packages would upgrade the pinned ones:
# unpack them all instead, and install only the shared libraries they
# load from the system (its LLVM; cargo's libgit2, libssh2, curl, sqlite).
llvm=$(apt-cache show "libstd-rust-web-$short=$version" | sed -n 's/^Depends: //p' \
    | tr ',' '\n' | grep -o 'libllvm[0-9]*' | head -n 1)
apt-get install -y --no-install-recommends "$llvm" \
    libgit2-1.5 libssh2-1 libcurl4 libsqlite3-0
work=$(mktemp -d)
chmod 755 "$work"
(cd "$work" && apt-get download "rustc-web=$version" "cargo-web=$version" \
    "libstd-rust-web-dev=$version" "libstd-rust-web-$short=$version")
for deb in "$work"/*.deb; do dpkg -x "$deb" "$dir"; done
rm -rf "$work"
multiarch=$(gcc -print-multiarch)
mkdir -p "$dir/bin"
cat > "$dir/bin/rustc" <<WRAP
#!/bin/sh
LD_LIBRARY_PATH=$dir/usr/lib/$multiarch exec $dir/usr/bin/rustc --sysroot $dir/usr "\$@"
WRAP
cat > "$dir/bin/cargo" <<WRAP
#!/bin/sh
RUSTC=$dir/bin/rustc exec $dir/usr/bin/cargo "\$@"
WRAP
chmod +x "$dir/bin/rustc" "$dir/bin/cargo"
"$dir/bin/rustc" -V
rustc -V
