package testbed

import "sync"

// Cleaner registers a function to run at teardown. testing.TB is a Cleaner.
type Cleaner interface {
	Cleanup(func())
}

// Cleanups is a Cleaner for programs that are not tests, such as the
// playground: Run calls every registered function, the last registered first.
type Cleanups struct {
	mu  sync.Mutex
	fns []func()
}

// Cleanup registers f.
func (c *Cleanups) Cleanup(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fns = append(c.fns, f)
}

// Run calls the registered functions in reverse order and forgets them, so a
// second Run does nothing.
func (c *Cleanups) Run() {
	c.mu.Lock()
	fns := c.fns
	c.fns = nil
	c.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}
