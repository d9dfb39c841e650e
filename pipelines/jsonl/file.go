// This file holds how the readers reach a file: through the Beam file
// system of its scheme, kept open for as long as the file is read, from any
// byte offset, and how big it is without reading it.

package jsonl

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// path is where the DoFns open file: a relative local name is taken from
// the working directory at construction.
func (p *parser) path(file string) string {
	if p.Dir != "" && isLocal(file) && !filepath.IsAbs(file) {
		return filepath.Join(p.Dir, file)
	}
	return file
}

// openFile is a file open for reading, with the file system it was opened
// through: some file systems (gs://) close their client on Close, and a
// reader of a closed client fails, so both are closed together.
type openFile struct {
	fs filesystem.Interface
	io.ReadCloser
}

// Close closes the reader, then its file system.
func (f *openFile) Close() error {
	err := f.ReadCloser.Close()
	if cerr := f.fs.Close(); err == nil {
		err = cerr
	}
	return err
}

// open opens file at byte offset off. Where the reader of the file system
// can seek (local files) it seeks; otherwise it reads and discards off
// bytes. The Beam file systems of v2.77 offer no ranged read: on gs:// or
// memfs:// a resumed replay avoids that cost by keeping its files open
// between checkpoints (see replayFn), so open skips bytes only when a
// replay resumes on a DoFn instance that has not read the file before.
func (p *parser) open(ctx context.Context, file string, off int64) (*openFile, error) {
	path := p.path(file)
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("beamjoin: %s: %w", file, err)
	}
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		fs.Close()
		return nil, fmt.Errorf("beamjoin: %s: %w", file, err)
	}
	f := &openFile{fs: fs, ReadCloser: r}
	if off > 0 {
		if sk, ok := r.(io.Seeker); ok {
			_, err = sk.Seek(off, io.SeekStart)
		} else {
			_, err = io.CopyN(io.Discard, r, off)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("beamjoin: %s: seeking to byte %d: %w", file, off, err)
		}
	}
	return f, nil
}

// size returns the size of file, as its file system reports it (a stat, or
// an object's metadata), without reading it.
func (p *parser) size(ctx context.Context, file string) (int64, error) {
	path := p.path(file)
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("beamjoin: %s: %w", file, err)
	}
	defer fs.Close()
	n, err := fs.Size(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("beamjoin: %s: %w", file, err)
	}
	return n, nil
}
