package sim

// network is the links between every pair of nodes: the sites 0..n-1 and the
// operator, node n. A link is down until a step, and may carry a delay (in
// steps) until a step; both are symmetric. One direction of a link may also
// be down alone (asymmetric loss, oneWayUntil): a request sent that way is
// lost, and one sent the other way arrives but its answer is lost. Calls
// (probes, SQL, sidecar polls) time out beyond one step of delay;
// replication over a slow link only moves every delay+1 steps.
type network struct {
	nodes       int
	downUntil   []int
	delay       []int
	delayUntil  []int
	oneWayUntil []int // per ordered pair from*nodes+to
}

func newNetwork(sites int) *network {
	n := sites + 1
	return &network{nodes: n, downUntil: make([]int, n*n), delay: make([]int, n*n), delayUntil: make([]int, n*n),
		oneWayUntil: make([]int, n*n)}
}

// cutOneWay loses everything sent from a to b until step until.
func (nw *network) cutOneWay(a, b, until int) {
	i := a*nw.nodes + b
	nw.oneWayUntil[i] = max(nw.oneWayUntil[i], until)
}

// sends reports whether a message from a reaches b at step (no delay counted).
func (nw *network) sends(a, b, step int) bool {
	return nw.up(a, b, step) && step >= nw.oneWayUntil[a*nw.nodes+b]
}

// delivers reports whether a request from a reaches b at step, whatever
// happens to its answer.
func (nw *network) delivers(a, b, step int) bool {
	return nw.sends(a, b, step) && nw.delayAt(a, b, step) <= 1
}

func (nw *network) idx(a, b int) int {
	if a > b {
		a, b = b, a
	}
	return a*nw.nodes + b
}

// cut takes the link a-b down until step until (never shortening a cut).
func (nw *network) cut(a, b, until int) {
	i := nw.idx(a, b)
	nw.downUntil[i] = max(nw.downUntil[i], until)
}

// isolate cuts every link of node a until step until.
func (nw *network) isolate(a, until int) {
	for b := range nw.nodes {
		if b != a {
			nw.cut(a, b, until)
		}
	}
}

// slow gives the link a-b a delay of d steps until step until.
func (nw *network) slow(a, b, d, until int) {
	i := nw.idx(a, b)
	nw.delay[i], nw.delayUntil[i] = d, until
}

func (nw *network) up(a, b, step int) bool { return step >= nw.downUntil[nw.idx(a, b)] }

func (nw *network) delayAt(a, b, step int) int {
	i := nw.idx(a, b)
	if step >= nw.delayUntil[i] {
		return 0
	}
	return nw.delay[i]
}

// connected reports whether a connection between a and b can carry data
// both ways at step (a replica's IO thread to its source).
func (nw *network) connected(a, b, step int) bool {
	return nw.sends(a, b, step) && nw.sends(b, a, step)
}

// call reports whether a request from a to b and its answer get through at step.
func (nw *network) call(a, b, step int) bool {
	return nw.delivers(a, b, step) && nw.sends(b, a, step)
}

// stream reports whether replication from b to a moves at step: its TCP
// connection needs both directions.
func (nw *network) stream(a, b, step int) bool {
	d := nw.delayAt(a, b, step)
	return nw.sends(a, b, step) && nw.sends(b, a, step) && step%(d+1) == 0
}
