// Package registry keeps the backends of a domain (tridiagonal plans,
// banded batches, SPIKE, Krylov spaces): each backend says which devices
// it serves, and a domain package asks for the backend of a device. GPU
// backends add themselves when the package that brings them in is
// imported, as database/sql drivers do, so a domain package never imports
// the GPU build.
package registry

import "sync"

// Registry holds the backends B of one domain.
type Registry[B any] struct {
	mu    sync.RWMutex
	opens []func(dev any) (B, bool)
}

// Add registers open, which returns the backend for dev, or false when
// dev is not a device it serves.
func (r *Registry[B]) Add(open func(dev any) (B, bool)) {
	r.mu.Lock()
	r.opens = append(r.opens, open)
	r.mu.Unlock()
}

// Find returns the backend of the first registered open that serves dev.
func (r *Registry[B]) Find(dev any) (B, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, open := range r.opens {
		if b, ok := open(dev); ok {
			return b, true
		}
	}
	var zero B
	return zero, false
}
