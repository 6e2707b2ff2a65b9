package clone

import (
	"context"
	"io"

	"golang.org/x/time/rate"
)

// throttleChunk is the most a throttled reader passes on per wait; with the
// bucket's burst at least this size, any rate is honoured within a chunk.
const throttleChunk = 64 << 10

// Throttle returns r limited to bytesPerSecond on average, as a token
// bucket holding at most a tenth of a second's worth (and never less than
// one chunk). bytesPerSecond <= 0 returns r unchanged: unlimited. A read
// waits for its tokens and returns ctx's error when ctx ends first.
func Throttle(ctx context.Context, r io.Reader, bytesPerSecond int64) io.Reader {
	if bytesPerSecond <= 0 {
		return r
	}
	burst := max(int(bytesPerSecond/10), throttleChunk)
	return &throttled{ctx: ctx, r: r, lim: rate.NewLimiter(rate.Limit(bytesPerSecond), burst)}
}

type throttled struct {
	ctx context.Context
	r   io.Reader
	lim *rate.Limiter
}

func (t *throttled) Read(p []byte) (int, error) {
	if len(p) > throttleChunk {
		p = p[:throttleChunk]
	}
	n, err := t.r.Read(p)
	if n > 0 {
		if werr := t.lim.WaitN(t.ctx, n); werr != nil {
			return n, werr
		}
	}
	return n, err
}
