package main

import "github.com/mitzbloom/mitzbloom/bloom"

// statsJSON is what /stats serves.
type statsJSON struct {
	Tunnels      tunnelJSON `json:"tunnels"`
	Destinations seenJSON   `json:"destinations"`
	Clients      seenJSON   `json:"clients"`
	// Connections counts the client connections of each listener the
	// proxy limits, by name: "proxy", and "admin" with -admin.
	Connections map[string]connJSON `json:"connections"`
	// Rejected counts the requests refused, by reason: bad_request (400),
	// method_not_allowed (405), port, loopback, private, link_local,
	// unspecified, multicast, reserved, proxy_itself and this_machine (403),
	// client_limit (429), too_many_tunnels and shutdown (503), unresolved
	// and unreachable (502), timeout (504).
	Rejected map[string]int64 `json:"rejected"`
}

// tunnelJSON counts tunnels and the bytes they carried.
type tunnelJSON struct {
	Total     int64 `json:"total"`
	Active    int64 `json:"active"`
	BytesUp   int64 `json:"bytes_up"`   // from clients to destinations
	BytesDown int64 `json:"bytes_down"` // from destinations to clients
}

// seenJSON counts the tunnels whose destination, or whose client, the
// filter did not remember (FirstSeen) or did (Repeats), and describes the
// filter.
type seenJSON struct {
	FirstSeen int64      `json:"first_seen"`
	Repeats   int64      `json:"repeats"`
	Filter    filterJSON `json:"filter"`
}

// filterJSON is bloom.RotatingStats in JSON's terms.
type filterJSON struct {
	// ApproximateCount estimates the distinct values remembered.
	ApproximateCount int64          `json:"approximate_count"`
	ExpectedFPP      float64        `json:"expected_fpp"`
	Rotations        int64          `json:"rotations"`
	EarlyRotations   int64          `json:"early_rotations"`
	Current          generationJSON `json:"current"`
	// Previous is nil until the first rotation: before it, the filter
	// has had one generation only.
	Previous *generationJSON `json:"previous"`
}

// generationJSON is bloom.GenerationStats in JSON's terms.
type generationJSON struct {
	AgeSeconds       float64 `json:"age_seconds"`
	Inserts          int64   `json:"inserts"`
	FillRatio        float64 `json:"fill_ratio"`
	ApproximateCount int64   `json:"approximate_count"`
	ExpectedFPP      float64 `json:"expected_fpp"`
}

// snapshot returns p's counters and its filters' statistics.
func (p *proxy) snapshot() statsJSON {
	ts, s := &p.tunnels, p.seen
	return statsJSON{
		Tunnels: tunnelJSON{
			Total:     ts.total.Load(),
			Active:    ts.active.Load(),
			BytesUp:   ts.bytesUp.Load(),
			BytesDown: ts.bytesDown.Load(),
		},
		Destinations: seenJSON{FirstSeen: s.newDests.Load(), Repeats: s.repeatDests.Load(), Filter: filterStats(s.dests.Stats())},
		Clients:      seenJSON{FirstSeen: s.newClients.Load(), Repeats: s.repeatClients.Load(), Filter: filterStats(s.clients.Stats())},
		Connections:  p.connStats(),
		Rejected:     p.rejected(),
	}
}

// connStats returns the counts of each listener's connections, by name.
func (p *proxy) connStats() map[string]connJSON {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := make(map[string]connJSON, len(p.limiters))
	for name, l := range p.limiters {
		m[name] = l.stats()
	}
	return m
}

// rejected returns the refusal counts by name.
func (p *proxy) rejected() map[string]int64 {
	m := make(map[string]int64, refusals)
	for why := refusalNone + 1; why < refusals; why++ {
		m[why.String()] = p.refused[why].Load()
	}
	return m
}

func filterStats(s bloom.RotatingStats) filterJSON {
	var prev *generationJSON
	if s.Rotations > 0 {
		g := generationStats(s.Previous)
		prev = &g
	}
	return filterJSON{
		ApproximateCount: s.ApproximateElementCount,
		ExpectedFPP:      s.ExpectedFPP,
		Rotations:        s.Rotations,
		EarlyRotations:   s.EarlyRotations,
		Current:          generationStats(s.Current),
		Previous:         prev,
	}
}

func generationStats(g bloom.GenerationStats) generationJSON {
	return generationJSON{
		AgeSeconds:       g.Age.Seconds(),
		Inserts:          g.Inserts,
		FillRatio:        g.FillRatio,
		ApproximateCount: g.ApproximateElementCount,
		ExpectedFPP:      g.ExpectedFPP,
	}
}
