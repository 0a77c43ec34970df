#!/usr/bin/env bash
# Makes a cluster CA (once) and, for each NAME, a key and a certificate signed
# by it, for Troupe's TLS (docs/tls.md): scripts/make_certs.sh DIR NAME...
set -euo pipefail

usage() {
  cat >&2 <<'EOF'
usage: scripts/make_certs.sh DIR NAME...
  Makes DIR/ca.pem + DIR/ca.key (the cluster CA) unless both exist, and for
  each NAME DIR/NAME.pem + DIR/NAME.key (serverAuth + clientAuth, signed by
  the CA, unencrypted key, mode 600) unless a pair that verifies exists.
  TROUPE_CERT_DAYS (default 825) sets how long node certificates last.
EOF
  exit 2
}

[[ $# -ge 2 ]] || usage
dir=$1
shift
command -v openssl >/dev/null || {
  echo "make_certs.sh: the openssl command is not installed" >&2
  exit 1
}
days=${TROUPE_CERT_DAYS:-825}
[[ $days =~ ^[0-9]+$ && $days -gt 0 ]] || {
  echo "make_certs.sh: TROUPE_CERT_DAYS must be a positive number, not '$days'" >&2
  exit 2
}
for name in "$@"; do
  if [[ ! $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ || $name == ca ]]; then
    echo "make_certs.sh: '$name' is not a usable NAME (letters, digits, . _ -; not 'ca')" >&2
    exit 2
  fi
done

umask 077
mkdir -p "$dir"
ca_pem=$dir/ca.pem
ca_key=$dir/ca.key

if [[ -f $ca_pem && -f $ca_key ]]; then
  echo "keeping the CA in $ca_pem"
elif [[ -f $ca_pem || -f $ca_key ]]; then
  echo "make_certs.sh: only one of $ca_pem and $ca_key exists; restore the other or remove both" >&2
  exit 1
else
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$ca_key" -out "$ca_pem" -days 3650 -sha256 \
    -subj "/O=Troupe/CN=Troupe cluster CA $(openssl rand -hex 4)" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  chmod 600 "$ca_key"
  chmod 644 "$ca_pem"
  echo "made the CA $ca_pem (keep $ca_key secret and off the nodes)"
fi

# Keeps NAME's pair when its certificate verifies against this CA for both
# roles and its key belongs to it; a CA made anew re-issues every pair.
pair_is_good() {
  local pem=$1 key=$2
  [[ -f $pem && -f $key ]] || return 1
  openssl verify -CAfile "$ca_pem" -purpose sslserver "$pem" >/dev/null 2>&1 || return 1
  openssl verify -CAfile "$ca_pem" -purpose sslclient "$pem" >/dev/null 2>&1 || return 1
  [[ "$(openssl x509 -in "$pem" -noout -pubkey 2>/dev/null)" == \
     "$(openssl pkey -in "$key" -pubout 2>/dev/null)" ]]
}

for name in "$@"; do
  pem=$dir/$name.pem
  key=$dir/$name.key
  if pair_is_good "$pem" "$key"; then
    echo "keeping $pem"
    continue
  fi
  if [[ $name =~ ^[0-9]+(\.[0-9]+){3}$ ]]; then
    alt="IP:$name"
  else
    alt="DNS:$name"
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cat >"$work/ext.cnf" <<EOF
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = $alt
EOF
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$work/key.pem" -out "$work/req.csr" -subj "/CN=$name" 2>/dev/null
  openssl x509 -req -in "$work/req.csr" -CA "$ca_pem" -CAkey "$ca_key" \
    -set_serial "0x$(openssl rand -hex 16)" -days "$days" -sha256 \
    -extfile "$work/ext.cnf" -out "$work/cert.pem" 2>/dev/null
  mv -f "$work/key.pem" "$key"
  mv -f "$work/cert.pem" "$pem"
  chmod 600 "$key"
  chmod 644 "$pem"
  rm -rf "$work"
  trap - EXIT
  echo "made $pem and $key"
done
