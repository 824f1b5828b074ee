package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// lazyFS is a FUSE loopback of a backing directory that remembers, per
// file, how to undo every write and truncation made since the file's last
// fsync; powerOff undoes them, so that the backing directory holds what a
// disk would after a power loss: only what was fsynced (as Jepsen's
// LazyFS). Reads and writes go through to the backing files at once (the
// page cache a real kernel keeps). Limits: creations, renames and
// removals count as durable at once; a file renamed after an unsynced
// write keeps that write.
type lazyFS struct {
	backing, mnt string
	server       *fuse.Server
	mu           sync.Mutex
	undo         map[string][]undoRec // by backing path; guarded by mu
}

// undoRec restores a file's bytes at off and its size; n is how many
// bytes the change wrote or cut.
type undoRec struct {
	off  int64
	old  []byte
	size int64
	n    int64
}

// mountLazy mounts a lazyFS of backing at mnt.
func mountLazy(backing, mnt string) (*lazyFS, error) {
	for _, d := range []string{backing, mnt} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	lz := &lazyFS{backing: backing, mnt: mnt, undo: map[string][]undoRec{}}
	root := &fs.LoopbackRoot{Path: backing}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, err
	}
	root.Dev = st.Dev
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &lazyNode{LoopbackNode: fs.LoopbackNode{RootData: r}, lz: lz}
	}
	rootNode := root.NewNode(root, nil, "", &st)
	root.RootNode = rootNode
	srv, err := fs.Mount(mnt, rootNode, &fs.Options{MountOptions: fuse.MountOptions{FsName: "rwlazy", DirectMount: true}})
	if err != nil {
		return nil, fmt.Errorf("faults: mount FUSE on %s: %w", mnt, err)
	}
	lz.server = srv
	return lz, nil
}

// unmount unmounts the filesystem; its files keep their current bytes.
func (lz *lazyFS) unmount() error {
	if lz.server == nil {
		return nil
	}
	err := lz.server.Unmount()
	lz.server = nil
	return err
}

// powerOff unmounts and undoes every write not fsynced, newest first, and
// returns how many bytes were written or cut since the files' last fsync.
// The processes on it must be dead.
func (lz *lazyFS) powerOff() (int64, error) {
	if err := lz.unmount(); err != nil {
		return 0, err
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	var lost int64
	for path, recs := range lz.undo {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue // removed or renamed since: see the type's limits
		}
		for i := len(recs) - 1; i >= 0; i-- {
			r := recs[i]
			if _, err := f.WriteAt(r.old, r.off); err != nil {
				f.Close()
				return lost, err
			}
			if err := f.Truncate(r.size); err != nil {
				f.Close()
				return lost, err
			}
			lost += r.n
		}
		f.Close()
	}
	lz.undo = map[string][]undoRec{}
	return lost, nil
}

// cutToEnd is record's n for a truncation: every byte from off on.
const cutToEnd = 1 << 62

// record remembers how to undo a change of n bytes at off of the file fd
// (path): the bytes there now and the size.
func (lz *lazyFS) record(path string, fd int, off, n int64) {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return
	}
	old := make([]byte, max(0, min(n, st.Size-off)))
	if len(old) > 0 {
		k, _ := syscall.Pread(fd, old, off)
		old = old[:max(k, 0)]
	}
	lz.mu.Lock()
	if n == cutToEnd {
		n = int64(len(old))
	}
	lz.undo[path] = append(lz.undo[path], undoRec{off: off, old: old, size: st.Size, n: n})
	lz.mu.Unlock()
}

func (lz *lazyFS) synced(path string) {
	lz.mu.Lock()
	delete(lz.undo, path)
	lz.mu.Unlock()
}

// lazyNode is a loopback node whose files are lazyFiles.
type lazyNode struct {
	fs.LoopbackNode
	lz *lazyFS
}

func (n *lazyNode) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// Open opens the backing file as a lazyFile.
func (n *lazyNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return fh, fl, errno
	}
	return &lazyFile{LoopbackFile: fh.(*fs.LoopbackFile), lz: n.lz, path: n.backingPath()}, fl, 0
}

// Create creates the backing file and opens it as a lazyFile.
func (n *lazyNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return in, fh, fl, errno
	}
	return in, &lazyFile{LoopbackFile: fh.(*fs.LoopbackFile), lz: n.lz, path: filepath.Join(n.backingPath(), name)}, fl, 0
}

// Setattr records a truncation without a file handle before it.
func (n *lazyNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok && f == nil {
		if fd, err := syscall.Open(n.backingPath(), syscall.O_RDONLY, 0); err == nil {
			n.lz.record(n.backingPath(), fd, int64(sz), cutToEnd)
			syscall.Close(fd)
		}
	}
	return n.LoopbackNode.Setattr(ctx, f, in, out)
}

// lazyFile is a loopback file that records how to undo its writes and
// truncations until its next fsync.
type lazyFile struct {
	*fs.LoopbackFile
	lz   *lazyFS
	path string
}

// PassthroughFd refuses the kernel's passthrough: every write must come
// through Write.
func (f *lazyFile) PassthroughFd() (int, bool) { return 0, false }

func (f *lazyFile) fd() (int, bool) { return f.LoopbackFile.PassthroughFd() }

// Write records the bytes it overwrites, then writes.
func (f *lazyFile) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if fd, ok := f.fd(); ok {
		f.lz.record(f.path, fd, off, int64(len(data)))
	}
	return f.LoopbackFile.Write(ctx, data, off)
}

// Fsync makes everything written to the file so far survive a power off.
func (f *lazyFile) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	errno := f.LoopbackFile.Fsync(ctx, flags)
	if errno == 0 {
		f.lz.synced(f.path)
	}
	return errno
}

// Setattr records the bytes a truncation cuts off, then truncates.
func (f *lazyFile) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok {
		if fd, ok := f.fd(); ok {
			f.lz.record(f.path, fd, int64(sz), cutToEnd)
		}
	}
	return f.LoopbackFile.Setattr(ctx, in, out)
}
