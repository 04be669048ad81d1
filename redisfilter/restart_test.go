package redisfilter_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// dropSyncFile removes the RDB file that the last full sync of a replica
// left in s's directory, so that s, restarted, comes back empty. Redis
// keeps that file even with persistence off (unless rdb-del-sync-files is
// yes) and loads it when it starts; a replica that loaded the file of a
// sync made before a filter was filled then resyncs partially, replaying
// its master's writes since, and until it has replayed them all serves
// the filter as it was then: its config and bitmaps, not all of its bits.
func (s *redisServer) dropSyncFile() error {
	err := os.Remove(filepath.Join(s.dir, "dump.rdb"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
