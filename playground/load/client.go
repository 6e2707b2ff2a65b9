package load

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Tables the load writes: writers into LoadTable, the prober into ProbeTable.
const (
	LoadTable  = "playground_load"
	ProbeTable = "playground_probe"
)

// Account is the MySQL account the load uses: the group's application account,
// which read_only stops.
type Account struct {
	User, Password, Database string
}

// quiet drops the driver's own log lines.
var quiet = mysql.Logger(log.New(io.Discard, "", 0))

// Client opens sessions for writers and the prober.
type Client struct {
	Dial    DialFunc
	Account Account
	// ServerSites maps a mysqld's server_id to its site, to name the site
	// that answered a session.
	ServerSites map[uint32]string
	// Timeout bounds one connect and one statement.
	Timeout time.Duration
}

// session is one open connection and the site behind it.
type session struct {
	conn driver.Conn
	addr string
	site string
}

func (s *session) close() { _ = s.conn.Close() }

// open connects to addr and asks the server which site it is.
func (c *Client) open(ctx context.Context, addr string) (*session, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = c.Account.User, c.Account.Password, c.Account.Database
	cfg.Net, cfg.Addr, cfg.DialFunc = "tcp", addr, c.Dial
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = c.Timeout, c.Timeout, c.Timeout
	cfg.Logger = quiet // every error is in the attempt already
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("connector %s: %w", addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	dc, err := conn.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", addr, err)
	}
	s := &session{conn: dc, addr: addr}
	id, err := s.queryInt(ctx, "SELECT @@server_id")
	if err != nil {
		s.close()
		return nil, err
	}
	s.site = c.ServerSites[uint32(id)]
	return s, nil
}

func (s *session) exec(ctx context.Context, q string) error {
	ex, ok := s.conn.(driver.ExecerContext)
	if !ok {
		return errors.New("driver connection cannot exec")
	}
	if _, err := ex.ExecContext(ctx, q, nil); err != nil {
		return fmt.Errorf("%s: %w", s.addr, err)
	}
	return nil
}

func (s *session) queryInt(ctx context.Context, q string) (int64, error) {
	vals, err := s.queryColumn(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(vals) != 1 {
		return 0, fmt.Errorf("%s: %d rows, want 1", q, len(vals))
	}
	return vals[0], nil
}

// queryColumn reads the first column of every row as integers.
func (s *session) queryColumn(ctx context.Context, q string) ([]int64, error) {
	qr, ok := s.conn.(driver.QueryerContext)
	if !ok {
		return nil, errors.New("driver connection cannot query")
	}
	rows, err := qr.QueryContext(ctx, q, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s.addr, q, err)
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	var out []int64
	for {
		if err := rows.Next(dest); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", s.addr, q, err)
		}
		v, err := toInt(dest[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", s.addr, q, err)
		}
		out = append(out, v)
	}
}

func toInt(v driver.Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case uint64:
		return int64(x), nil
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("unexpected value %T", v)
}

// IDs hands out unique ids, counting up from a base.
type IDs struct {
	base int64
	next atomic.Int64
}

// NewIDs starts at a base derived from the clock, so runs on the same
// tables never reuse ids.
func NewIDs() *IDs {
	ids := &IDs{base: time.Now().UnixMilli() * 1000}
	ids.next.Store(ids.base)
	return ids
}

// Base is the first id.
func (i *IDs) Base() int64 { return i.base }

// Next returns a fresh id.
func (i *IDs) Next() int64 { return i.next.Add(1) }

// Exec opens a session to addr, runs the statements in order and closes it.
func (c *Client) Exec(ctx context.Context, addr string, stmts ...string) error {
	s, err := c.open(ctx, addr)
	if err != nil {
		return err
	}
	defer s.close()
	for _, q := range stmts {
		if err := s.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// Hold opens a session to addr, runs stmt and keeps the session open until
// release is called: for a lock that lasts as long as its session.
func (c *Client) Hold(ctx context.Context, addr, stmt string) (release func(), err error) {
	s, err := c.open(ctx, addr)
	if err != nil {
		return nil, err
	}
	if err := s.exec(ctx, stmt); err != nil {
		s.close()
		return nil, err
	}
	return s.close, nil
}

// QueryInt opens a session to addr, reads one integer and closes it.
func (c *Client) QueryInt(ctx context.Context, addr, q string) (int64, error) {
	s, err := c.open(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer s.close()
	return s.queryInt(ctx, q)
}
