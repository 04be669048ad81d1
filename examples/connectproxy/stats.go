package main

import "github.com/mitzbloom/mitzbloom/bloom"

// Stats is what /stats serves.
type Stats struct {
	Tunnels      TunnelStats `json:"tunnels"`
	Destinations SeenStats   `json:"destinations"`
	Clients      SeenStats   `json:"clients"`
	// Rejected counts the requests refused, by reason.
	Rejected RejectedStats `json:"rejected"`
}

// TunnelStats counts tunnels and the bytes they carried.
type TunnelStats struct {
	Total     int64 `json:"total"`
	Active    int64 `json:"active"`
	BytesUp   int64 `json:"bytes_up"`   // from clients to destinations
	BytesDown int64 `json:"bytes_down"` // from destinations to clients
}

// SeenStats counts the tunnels whose destination, or whose client, the
// filter did not remember (FirstSeen) or did (Repeats), and describes the
// filter.
type SeenStats struct {
	FirstSeen int64       `json:"first_seen"`
	Repeats   int64       `json:"repeats"`
	Filter    FilterStats `json:"filter"`
}

// FilterStats is bloom.RotatingStats in JSON's terms.
type FilterStats struct {
	// ApproximateCount estimates the distinct values remembered.
	ApproximateCount int64           `json:"approximate_count"`
	ExpectedFPP      float64         `json:"expected_fpp"`
	Rotations        int64           `json:"rotations"`
	EarlyRotations   int64           `json:"early_rotations"`
	Current          GenerationStats `json:"current"`
	Previous         GenerationStats `json:"previous"`
}

// GenerationStats is bloom.GenerationStats in JSON's terms.
type GenerationStats struct {
	AgeSeconds       float64 `json:"age_seconds"`
	Inserts          int64   `json:"inserts"`
	FillRatio        float64 `json:"fill_ratio"`
	ApproximateCount int64   `json:"approximate_count"`
	ExpectedFPP      float64 `json:"expected_fpp"`
}

// RejectedStats counts refused requests by the status they got.
type RejectedStats struct {
	BadRequest       int64 `json:"bad_request"`        // 400: malformed CONNECT target
	MethodNotAllowed int64 `json:"method_not_allowed"` // 405: not CONNECT
	BadGateway       int64 `json:"bad_gateway"`        // 502: destination unreachable
	GatewayTimeout   int64 `json:"gateway_timeout"`    // 504: destination too slow to answer
}

// Stats returns p's counters and its filters' statistics.
func (p *Proxy) Stats() Stats {
	return Stats{
		Tunnels: TunnelStats{
			Total:     p.tunnels.Load(),
			Active:    p.active.Load(),
			BytesUp:   p.bytesUp.Load(),
			BytesDown: p.bytesDown.Load(),
		},
		Destinations: SeenStats{FirstSeen: p.newDests.Load(), Repeats: p.seenDests.Load(), Filter: filterStats(p.dests.Stats())},
		Clients:      SeenStats{FirstSeen: p.newClients.Load(), Repeats: p.seenClients.Load(), Filter: filterStats(p.clients.Stats())},
		Rejected: RejectedStats{
			BadRequest:       p.badRequest.Load(),
			MethodNotAllowed: p.notAllowed.Load(),
			BadGateway:       p.badGate.Load(),
			GatewayTimeout:   p.gateTimeout.Load(),
		},
	}
}

func filterStats(s bloom.RotatingStats) FilterStats {
	return FilterStats{
		ApproximateCount: s.ApproximateElementCount,
		ExpectedFPP:      s.ExpectedFPP,
		Rotations:        s.Rotations,
		EarlyRotations:   s.EarlyRotations,
		Current:          generationStats(s.Current),
		Previous:         generationStats(s.Previous),
	}
}

func generationStats(g bloom.GenerationStats) GenerationStats {
	return GenerationStats{
		AgeSeconds:       g.Age.Seconds(),
		Inserts:          g.Inserts,
		FillRatio:        g.FillRatio,
		ApproximateCount: g.ApproximateElementCount,
		ExpectedFPP:      g.ExpectedFPP,
	}
}
