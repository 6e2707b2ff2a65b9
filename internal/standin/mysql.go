package standin

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	gm "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// Version is what a stand-in answers for @@version.
const Version = "10.11.6-MariaDB-standin"

// Config is one stand-in's identity and login.
type Config struct {
	ServerID       uint32
	Domain         uint32
	User, Password string
	// Listen is the address to listen on; "" is a free loopback port.
	Listen string
}

// MySQL is one stand-in server on loopback.
type MySQL struct {
	cfg     Config
	srv     *server.Server
	ln      net.Listener
	started time.Time

	mu       sync.Mutex
	seq      uint64 // the last GTID seq written or replicated
	writer   uint32 // the server id of that GTID
	readOnly bool
	source   *MySQL // replicates from it, when set
	// sourceAt is the host:port a replica reports for its source ("":
	// the source's listening address).
	sourceAt string
	cert     *tls.Certificate // served once set (SetCertificate)
	srcTLS   SourceTLS        // how a replica reports its connection's TLS
	down     bool
	hang     chan struct{} // closed to release hung sessions; nil: not hung
	conns    map[net.Conn]bool
	unknown  []string
	served   map[string]int
	accepted int
	failed   []string // the first few failed handshakes' errors
	closed   bool
}

// StartMySQL listens on a loopback port; Close stops it. A new stand-in is
// read-only and has written nothing.
func StartMySQL(cfg Config) (*MySQL, error) {
	addr := cfg.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("stand-in listen: %w", err)
	}
	s := &MySQL{cfg: cfg, ln: ln, started: time.Now(), readOnly: true, conns: map[net.Conn]bool{}, served: map[string]int{}}
	// TLS is offered from the start; a handshake fails until a certificate
	// is set, as a mysqld without its certificate files would refuse it.
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certificate}
	s.srv = server.NewServer(Version, gm.DEFAULT_COLLATION_ID, gm.AUTH_NATIVE_PASSWORD, nil, tc)
	go s.accept()
	return s, nil
}

// Addr is host:port.
func (s *MySQL) Addr() string { return s.ln.Addr().String() }

// Close stops the listener and every session.
func (s *MySQL) Close() {
	s.mu.Lock()
	s.closed = true
	s.dropLocked()
	s.releaseLocked()
	s.mu.Unlock()
	_ = s.ln.Close()
}

func (s *MySQL) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		refuse := s.down || s.closed
		if !refuse {
			s.conns[c] = true
			s.accepted++
		}
		s.mu.Unlock()
		if refuse {
			_ = c.Close()
			continue
		}
		go s.serve(c)
	}
}

func (s *MySQL) serve(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	conn, err := s.srv.NewConn(c, s.cfg.User, s.cfg.Password, handler{s})
	if err != nil {
		s.mu.Lock()
		if len(s.failed) < 5 {
			s.failed = append(s.failed, err.Error())
		}
		s.mu.Unlock()
		return
	}
	for !conn.Closed() {
		if err := conn.HandleCommand(); err != nil {
			return
		}
	}
}

// Write commits n transactions as the writer: refused while read-only.
func (s *MySQL) Write(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly || s.source != nil {
		return errors.New("stand-in: read-only")
	}
	s.seq += uint64(n)
	s.writer = s.cfg.ServerID
	return nil
}

// SetWritable lowers or raises the read-only barrier.
func (s *MySQL) SetWritable(on bool) {
	s.mu.Lock()
	s.readOnly = !on
	s.mu.Unlock()
}

// ReplicateFrom makes s a replica of src (nil: none); a replica holds what
// its source holds whenever it is read.
func (s *MySQL) ReplicateFrom(src *MySQL) { s.ReplicateFromAt(src, "") }

// ReplicateFromAt is ReplicateFrom with the host:port the replica reports
// as its source (a Service name rather than src's loopback address; "":
// src's address).
func (s *MySQL) ReplicateFromAt(src *MySQL, at string) {
	s.mu.Lock()
	s.source, s.sourceAt = src, at
	s.mu.Unlock()
}

// SourceTLS is what a replica reports of its connection's TLS: the
// files it presents and checks, and whether it verifies the source's name.
type SourceTLS struct {
	CAFile, CertFile, KeyFile string
	Verify                    bool
}

// SetSourceTLS sets what the replica reports of its source connection's TLS.
func (s *MySQL) SetSourceTLS(t SourceTLS) {
	s.mu.Lock()
	s.srcTLS = t
	s.mu.Unlock()
}

// SetCertificate makes the stand-in serve TLS with c.
func (s *MySQL) SetCertificate(c tls.Certificate) {
	s.mu.Lock()
	s.cert = &c
	s.mu.Unlock()
}

// HasCertificate reports whether SetCertificate was called.
func (s *MySQL) HasCertificate() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cert != nil
}

func (s *MySQL) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cert == nil {
		return nil, errors.New("stand-in: no certificate yet")
	}
	return s.cert, nil
}

// ReadOnly reports the read-only barrier.
func (s *MySQL) ReadOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readOnly
}

// SetDown refuses (true) or accepts (false) connections; going down ends
// every open session, as a dead mysqld would.
func (s *MySQL) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
	if down {
		s.dropLocked()
	}
}

// SetHang makes every statement wait until it is turned off again (a
// frozen mysqld that still accepts connections).
func (s *MySQL) SetHang(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case on && s.hang == nil:
		s.hang = make(chan struct{})
	case !on:
		s.releaseLocked()
	}
}

// Unknown is every statement the stand-in could not answer.
func (s *MySQL) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}

// Sessions is how many connections were accepted, and the first few
// handshakes that failed.
func (s *MySQL) Sessions() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, append([]string(nil), s.failed...)
}

// Served counts the statements answered, by kind.
func (s *MySQL) Served() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.served))
	for k, v := range s.served {
		out[k] = v
	}
	return out
}

func (s *MySQL) dropLocked() {
	for c := range s.conns {
		_ = c.Close()
	}
}

func (s *MySQL) releaseLocked() {
	if s.hang != nil {
		close(s.hang)
		s.hang = nil
	}
}

// state is what a read sees: the position, its writer, and the source's
// address when replicating.
type state struct {
	seq      uint64
	writer   uint32
	readOnly bool
	source   string
	tls      SourceTLS
}

func (s *MySQL) read() state {
	s.mu.Lock()
	src, at := s.source, s.sourceAt
	st := state{seq: s.seq, writer: s.writer, readOnly: s.readOnly, tls: s.srcTLS}
	s.mu.Unlock()
	if src != nil {
		ss := src.read()
		if at == "" {
			at = src.Addr()
		}
		st.seq, st.writer, st.source = ss.seq, ss.writer, at
		s.mu.Lock()
		s.seq, s.writer = ss.seq, ss.writer
		s.mu.Unlock()
	}
	return st
}

// wait blocks while the stand-in hangs, up to a minute.
func (s *MySQL) wait() {
	s.mu.Lock()
	h := s.hang
	s.mu.Unlock()
	if h == nil {
		return
	}
	select {
	case <-h:
	case <-time.After(time.Minute):
	}
}

// pos is the GTID position string ("" before any write).
func (st state) pos(domain uint32) string {
	if st.seq == 0 {
		return ""
	}
	return fmt.Sprintf("%d-%d-%d", domain, st.writer, st.seq)
}

func normalize(q string) string { return strings.Join(strings.Fields(q), " ") }
