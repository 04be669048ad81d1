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

// refusalInfo gives each refusal its counter's name, its status, the reason
// in the body, and its error type in the Proxy-Status header (RFC 9209),
// which curl -v shows where curl alone says only "response 502".
var refusalInfo = [refusals]struct {
	name        string
	status      int
	reason      string
	proxyStatus string
}{
	refusalBadRequest:  {"bad_request", http.StatusBadRequest, "malformed CONNECT target", "http_request_error"},
	refusalMethod:      {"method_not_allowed", http.StatusMethodNotAllowed, "this proxy only tunnels: use CONNECT", "http_request_denied"},
	refusalPort:        {"port", http.StatusForbidden, "destination port not allowed", "http_request_denied"},
	refusalLoopback:    {"loopback", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalPrivate:     {"private", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalLinkLocal:   {"link_local", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalUnspecified: {"unspecified", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalMulticast:   {"multicast", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalReserved:    {"reserved", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalSelf:        {"proxy_itself", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalMachine:     {"this_machine", http.StatusForbidden, "destination address not allowed", "destination_ip_prohibited"},
	refusalTooMany:     {"too_many_tunnels", http.StatusServiceUnavailable, "too many tunnels open, try later", "proxy_internal_response"},
	refusalClientLimit: {"client_limit", http.StatusTooManyRequests, "too many tunnels open from your address", "http_request_denied"},
	refusalUnresolved:  {"unresolved", http.StatusBadGateway, "cannot resolve destination", "dns_error"},
	refusalUnreachable: {"unreachable", http.StatusBadGateway, "cannot reach destination", "destination_unavailable"},
	refusalTimeout:     {"timeout", http.StatusGatewayTimeout, "destination did not answer in time", "connection_timeout"},
	refusalShutdown:    {"shutdown", http.StatusServiceUnavailable, "proxy shutting down", "proxy_internal_response"},
}

func (r refusal) String() string { return refusalInfo[r].name }
