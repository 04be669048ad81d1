#!/usr/bin/env bash
# Runs loadtest against this proxy and its peers, each started fresh on a
# loopback port of its own and stopped after, in interleaved rounds, so
# that every proxy sees the same load on the machine. See the connectproxy
# README for building the binaries:
#
#	bash examples/connectproxy/loadtest/peers.sh ROUNDS NAME...
#
# NAME is connectproxy, goproxy, plain, tinyproxy or squid; connectproxy and
# goproxy are the binaries $CONNECTPROXY and $GOPROXY_BIN (not $GOPROXY, which
# is the go command's module proxy), plain is plainproxy, built here, the
# plainest CONNECT proxy in Go, and tinyproxy and squid
# are on PATH (Debian: apt-get install tinyproxy squid). A Go proxy's NAME
# followed by :1 (connectproxy:1) runs it with GOMAXPROCS=1. One line per
# proxy and round.
set -euo pipefail
rounds=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
loadtest=$dir/loadtest
# Built from its own directory, so that the go command finds the example's
# module and the repository's go.work whatever the current directory.
(cd "$(dirname "$0")" && go build -o "$loadtest" . && go build -o "$dir/plainproxy" ./plainproxy)

cat >"$dir/tinyproxy.conf" <<END
Port 18094
Listen 127.0.0.1
Timeout 600
MaxClients 4000
LogLevel Critical
LogFile "$dir/tinyproxy.log"
Allow 127.0.0.1
DisableViaHeader Yes
END
cat >"$dir/squid.conf" <<END
http_port 127.0.0.1:18095
acl localnet src 127.0.0.1
http_access allow localnet
http_access deny all
cache deny all
cache_mem 8 MB
access_log none
cache_store_log none
cache_log $dir/squid-cache.log
pid_filename none
coredump_dir $dir
max_filedescriptors 16384
workers 1
shutdown_lifetime 0 seconds
END

for round in $(seq "$rounds"); do
	for label in "$@"; do
		name=${label%:1}
		run=(env)
		if [ "$name" != "$label" ]; then run=(env GOMAXPROCS=1); fi
		case $name in
		connectproxy)
			"${run[@]}" "$CONNECTPROXY" -listen 127.0.0.1:18091 -allow-ports 1-65535 -allow-hosts 127.0.0.1 -allow-machine \
				-max-tunnels 2000 -max-client-tunnels 2000 2>"$dir/connectproxy.log" &
			port=18091 ;;
		goproxy) "${run[@]}" "$GOPROXY_BIN" -listen 127.0.0.1:18093 & port=18093 ;;
		plain) "${run[@]}" "$dir/plainproxy" -listen 127.0.0.1:18096 & port=18096 ;;
		tinyproxy) tinyproxy -d -c "$dir/tinyproxy.conf" >/dev/null 2>&1 & port=18094 ;;
		squid) squid -N -f "$dir/squid.conf" >/dev/null 2>&1 & port=18095 ;;
		*) echo "unknown proxy $name" >&2; exit 2 ;;
		esac
		pid=$!
		up=0
		for _ in $(seq 100); do
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
			sleep 0.1
		done
		if [ $up = 0 ]; then
			echo "round=$round proxy=$label did not start" >&2
			kill "$pid"
			exit 1
		fi
		echo "round=$round proxy=$label $("$loadtest" -proxy "127.0.0.1:$port" -pid "$pid" 2>&1 | tr '\n' ' ')load=$(cut -d' ' -f1 /proc/loadavg)"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
done
