package redisfilter

import (
	"context"
	"fmt"
	"strings"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// evictingPolicy reports whether a maxmemory-policy may evict a filter's
// keys: every allkeys-* policy, and for a window, whose bitmaps expire,
// every volatile-* one.
func evictingPolicy(policy string, windowed bool) bool {
	return strings.HasPrefix(policy, "allkeys-") || windowed && strings.HasPrefix(policy, "volatile-")
}

// checkEviction reads maxmemory-policy from INFO memory of every node (of a
// cluster, masters and replicas alike, since a replica may be promoted), and
// refuses one that may evict the filter's keys unless s allows it. A node
// that does not tell its policy (INFO denied, or a managed Redis that leaves
// the field out) is not refused: eviction there is still caught, as ErrLost.
func (c *core[T]) checkEviction(ctx context.Context, s settings) error {
	if s.allowEviction {
		return nil
	}
	replies, err := c.wire.EachNode(ctx, "INFO", "memory")
	if err != nil {
		return c.wrap(ctx, "open", err)
	}
	for _, r := range replies {
		if r.Err != nil {
			if ctx.Err() != nil || wire.AuthRefused(r.Err) {
				return c.wrap(ctx, "open", r.Err)
			}
			continue
		}
		info, _ := r.Val.(string)
		for line := range strings.Lines(info) {
			policy, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory_policy:")
			if ok && evictingPolicy(policy, c.windowed) {
				return fmt.Errorf("%w: open %q: the server's maxmemory-policy is %s, which may evict the filter's keys; set it to noeviction, or open with WithEvictionAllowed, and calls will then report evicted bits as ErrLost", ErrEvictable, c.name, policy)
			}
		}
	}
	return nil
}
