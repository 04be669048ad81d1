package main

import "net/http"

// A refusal is why a request got no tunnel. Each has a name for the
// counters, a status, and the reason the client is told: enough to know
// what to change, nothing about the proxy's insides.
type refusal int

const (
	refusalNone refusal = iota
	refusalBadRequest
	refusalMethod
	refusalPort
	refusalLoopback
	refusalPrivate
	refusalLinkLocal
	refusalUnspecified
	refusalMulticast
	refusalReserved
	refusalSelf
	refusalMachine
	refusalTooMany
	refusalClientLimit
	refusalUnresolved
	refusalUnreachable
	refusalTimeout
	refusalShutdown
	refusals // how many there are
)

var refusalInfo = [refusals]struct {
	name   string
	status int
	reason string
}{
	refusalBadRequest:  {"bad_request", http.StatusBadRequest, "malformed CONNECT target"},
	refusalMethod:      {"method_not_allowed", http.StatusMethodNotAllowed, "this proxy only tunnels: use CONNECT"},
	refusalPort:        {"port", http.StatusForbidden, "destination port not allowed"},
	refusalLoopback:    {"loopback", http.StatusForbidden, "destination address not allowed"},
	refusalPrivate:     {"private", http.StatusForbidden, "destination address not allowed"},
	refusalLinkLocal:   {"link_local", http.StatusForbidden, "destination address not allowed"},
	refusalUnspecified: {"unspecified", http.StatusForbidden, "destination address not allowed"},
	refusalMulticast:   {"multicast", http.StatusForbidden, "destination address not allowed"},
	refusalReserved:    {"reserved", http.StatusForbidden, "destination address not allowed"},
	refusalSelf:        {"proxy_itself", http.StatusForbidden, "destination address not allowed"},
	refusalMachine:     {"this_machine", http.StatusForbidden, "destination address not allowed"},
	refusalTooMany:     {"too_many_tunnels", http.StatusServiceUnavailable, "too many tunnels open, try later"},
	refusalClientLimit: {"client_limit", http.StatusTooManyRequests, "too many tunnels open from your address"},
	refusalUnresolved:  {"unresolved", http.StatusBadGateway, "cannot resolve destination"},
	refusalUnreachable: {"unreachable", http.StatusBadGateway, "cannot reach destination"},
	refusalTimeout:     {"timeout", http.StatusGatewayTimeout, "destination did not answer in time"},
	refusalShutdown:    {"shutdown", http.StatusServiceUnavailable, "proxy shutting down"},
}

func (r refusal) String() string { return refusalInfo[r].name }
