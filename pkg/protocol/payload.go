package protocol

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// PayloadVersion tags the layout of the signed bytes. A change of layout
// takes a new tag, so a signature can never be read under another layout.
const PayloadVersion = "bloodraven.shipstream.io/view/v1"

// Payload is the canonical byte string a view is signed over: the version
// tag and every signed field, each preceded by its length as a 4-byte
// big-endian integer. Source, Seq and Signature are not part of it: Seq is
// the serving operator's own counter, echoed back only to that process
// (see v1alpha1.ActiveSiteView.Seq for why it stays unsigned), and the
// layout stays the one every released sidecar verifies.
func Payload(v v1alpha1.ActiveSiteView) []byte {
	fields := []string{
		PayloadVersion,
		v.Namespace,
		v.Group,
		v.ActiveSite,
		strconv.FormatInt(v.Generation, 10),
		FormatObservedAt(v.ObservedAt),
		v.Operator,
		v.KeyID,
	}
	n := 0
	for _, f := range fields {
		n += 4 + len(f)
	}
	out := make([]byte, 0, n)
	for _, f := range fields {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return out
}

// FormatObservedAt is observedAt as the payload holds it: UTC, RFC 3339 with
// nanoseconds. JSON carries the same instant, so a relayed view verifies.
func FormatObservedAt(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
