package sidecar

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// ReplyKind is what came back from one GET of a view.
type ReplyKind uint8

// The kinds of reply.
const (
	// ReplyNone: not asked, or no answer (refused, timed out, an unexpected
	// HTTP status). Err says why when it was asked.
	ReplyNone ReplyKind = iota
	// ReplyView: 200 with a view; the Loop still checks its content.
	ReplyView
	// ReplyNoView: a peer answered 503, it holds no view yet.
	ReplyNoView
	// ReplyTooOld: a peer answered 404, it predates /peer/active-site.
	ReplyTooOld
	// ReplyMalformed: 200 with a body that is not a view.
	ReplyMalformed
)

var replyKindNames = [...]string{ReplyNone: "none", ReplyView: "view", ReplyNoView: "no-view",
	ReplyTooOld: "too-old", ReplyMalformed: "malformed"}

func (k ReplyKind) String() string {
	if int(k) < len(replyKindNames) {
		return replyKindNames[k]
	}
	return fmt.Sprintf("ReplyKind(%d)", k)
}

// Reply is one answer to GET /active-site or GET /peer/active-site.
type Reply struct {
	Kind ReplyKind
	View v1alpha1.ActiveSiteView
	// Err says why the reply carries no view; nil for ReplyView.
	Err error
}

// PeerReply is one peer's Reply, Peer naming the peer (its site).
type PeerReply struct {
	Peer string
	Reply
}

// ViewReply is a ReplyView of v.
func ViewReply(v v1alpha1.ActiveSiteView) Reply { return Reply{Kind: ReplyView, View: v} }

// Classify turns an HTTP answer into a Reply. fromPeer tells a peer's answer
// from the operator's: only a peer's 404 and 503 have a meaning of their own.
func Classify(status int, body []byte, fromPeer bool) Reply {
	switch {
	case status == http.StatusOK:
		var v v1alpha1.ActiveSiteView
		if err := json.Unmarshal(body, &v); err != nil {
			return Reply{Kind: ReplyMalformed, Err: fmt.Errorf("%w: %w", ErrMalformed, err)}
		}
		return ViewReply(v)
	case fromPeer && status == http.StatusNotFound:
		return Reply{Kind: ReplyTooOld, Err: ErrPeerTooOld}
	case fromPeer && status == http.StatusServiceUnavailable:
		return Reply{Kind: ReplyNoView, Err: ErrNoView}
	}
	return Reply{Err: fmt.Errorf("HTTP status %d: %w", status, ErrUnreachable)}
}
