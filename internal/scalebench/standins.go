package scalebench

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"

	"github.com/shipstream/bloodraven/internal/standin"
	"github.com/shipstream/bloodraven/pkg/routing"
)

// Sites are each group's two sites: the first starts as the primary.
var Sites = [2]string{"a", "b"}

// Site is one stand-in and the Service name the operator dials it at.
type Site struct {
	Group, Name string
	Host        string // the Service host name
	IP          string // its own loopback address
	DB          *standin.MySQL
}

// Fleet is every group's stand-ins.
type Fleet struct {
	NS     string
	Groups []string
	Sites  map[string]*Site // by "<group>-<site>"
}

// GroupName is the i-th group's name.
func GroupName(i int) string { return fmt.Sprintf("g%04d", i) }

// loopbackIP is the i-th group's j-th site's own address: 127.(10+i/250).(i%250).(j+1).
func loopbackIP(i, j int) string {
	return fmt.Sprintf("127.%d.%d.%d", 10+i/250, i%250, j+1)
}

// StartFleet starts n groups' stand-ins in their steady state, logging in
// with the operator account user/password.
func StartFleet(ns string, n int, user, password string) (*Fleet, error) {
	f := &Fleet{NS: ns, Sites: map[string]*Site{}}
	for i := 0; i < n; i++ {
		g := GroupName(i)
		f.Groups = append(f.Groups, g)
		var first *Site
		for j, name := range Sites {
			ip := loopbackIP(i, j)
			db, err := standin.StartMySQL(standin.Config{ServerID: uint32(j + 1), User: user, Password: password,
				Listen: net.JoinHostPort(ip, strconv.Itoa(routing.MySQLPort))})
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("group %s site %s: %w", g, name, err)
			}
			s := &Site{Group: g, Name: name, Host: routing.SiteServiceHost(ns, g, name), IP: ip, DB: db}
			f.Sites[routing.SiteName(g, name)] = s
			if first == nil {
				first = s
				db.SetWritable(true)
				if err := db.Write(1); err != nil {
					f.Close()
					return nil, fmt.Errorf("group %s: %w", g, err)
				}
				continue
			}
			db.ReplicateFromAt(first.DB, net.JoinHostPort(first.Host, strconv.Itoa(routing.MySQLPort)))
			// As the operator sets a replica up once its sites have certificates.
			tf := routing.PodTLSFiles
			db.SetSourceTLS(standin.SourceTLS{CAFile: tf.CA, CertFile: tf.Cert, KeyFile: tf.Key, Verify: true})
		}
	}
	return f, nil
}

// Site returns a group's site.
func (f *Fleet) Site(group, site string) *Site { return f.Sites[routing.SiteName(group, site)] }

// Hosts is an /etc/hosts that maps every Service name to its stand-in.
func (f *Fleet) Hosts() []byte {
	b := []byte("127.0.0.1 localhost\n::1 localhost\n")
	for _, g := range f.Groups {
		for _, name := range Sites {
			s := f.Site(g, name)
			b = append(b, fmt.Sprintf("%s %s\n", s.IP, s.Host)...)
		}
	}
	return b
}

// WriteAll commits one transaction on every writable stand-in.
func (f *Fleet) WriteAll() {
	for _, s := range f.Sites {
		if !s.DB.ReadOnly() {
			_ = s.DB.Write(1)
		}
	}
}

// SetCertificate serves a site's certificate (its TLS Secret's pair).
func (f *Fleet) SetCertificate(group, site string, certPEM, keyPEM []byte) error {
	s := f.Site(group, site)
	if s == nil {
		return fmt.Errorf("no site %s/%s", group, site)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("site %s/%s certificate: %w", group, site, err)
	}
	s.DB.SetCertificate(c)
	return nil
}

// Unknown is every statement a stand-in could not answer, by site.
func (f *Fleet) Unknown() map[string][]string {
	out := map[string][]string{}
	for k, s := range f.Sites {
		if u := s.DB.Unknown(); len(u) > 0 {
			out[k] = u
		}
	}
	return out
}

// Served sums the statements answered, by kind.
func (f *Fleet) Served() map[string]int {
	out := map[string]int{}
	for _, s := range f.Sites {
		for k, v := range s.DB.Served() {
			out[k] += v
		}
	}
	return out
}

// Close stops every stand-in.
func (f *Fleet) Close() {
	for _, s := range f.Sites {
		s.DB.Close()
	}
}
