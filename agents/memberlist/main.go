// fdlab-memberlist-agent: one hashicorp/memberlist member in one process,
// on 127.0.0.1, for `fdlab live` on a membership scenario (fdlab's SPEC
// §12). It is built by fdlab from Debian's golang-go and
// golang-github-hashicorp-memberlist-dev (memberlist 0.2.2) in GOPATH mode.
//
// Standard output: one CSV line per thing the member observes, with its
// local (wall) time in Unix nanoseconds:
//
//	unix_ns,observer,event,subject,detail
//
// event is one of
//   - ready: the member is up; detail = its port;
//   - join: subject became Alive in its list (memberlist's NotifyJoin:
//     first heard of, or back from Dead);
//   - suspect: it moved subject to Suspect (the counter memberlist raises in
//     suspectNode, state.go:1175 at v0.2.2); detail = probe (its own failed
//     probe, subject named) or gossip (heard, subject empty);
//   - declare: its own suspicion timer of subject ran out (the log line of
//     state.go:1211);
//   - dead: it moved subject to Dead, by its own timer or by gossip
//     (NotifyLeave, state.go:1277);
//   - refute: it refuted a suspicion or a death of itself (state.go:1168,
//     1250); detail = suspect or dead;
//   - error: memberlist logged an error; detail = the message;
//   - sent: cumulative counts, every second: detail = packets/streams, the
//     UDP packets it sent and the TCP streams it opened or accepted.
//
// Standard input: `join ADDR,ADDR,...` joins those members; when it closes
// (the parent is gone) the process exits at once, without leaving.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metrics "github.com/armon/go-metrics"
	"github.com/hashicorp/memberlist"
)

var (
	name       = flag.String("name", "", "member name")
	probeIv    = flag.Duration("probe-interval", time.Second, "ProbeInterval")
	probeTo    = flag.Duration("probe-timeout", 500*time.Millisecond, "ProbeTimeout")
	indirect   = flag.Int("indirect-checks", 3, "IndirectChecks")
	suspMult   = flag.Int("suspicion-mult", 4, "SuspicionMult")
	suspMax    = flag.Int("suspicion-max-timeout-mult", 6, "SuspicionMaxTimeoutMult")
	gossipIv   = flag.Duration("gossip-interval", 200*time.Millisecond, "GossipInterval")
	gossipN    = flag.Int("gossip-nodes", 3, "GossipNodes")
	toTheDead  = flag.Duration("gossip-to-the-dead-time", 30*time.Second, "GossipToTheDeadTime")
	retransmit = flag.Int("retransmit-mult", 4, "RetransmitMult")
	awareness  = flag.Int("awareness-max-multiplier", 8, "AwarenessMaxMultiplier")
	udpBuffer  = flag.Int("udp-buffer-size", 1400, "UDPBufferSize")
	pushPull   = flag.Duration("push-pull-interval", 30*time.Second, "PushPullInterval")
	noTCPPing  = flag.Bool("disable-tcp-pings", false, "DisableTcpPings")
	parent     = flag.Int("parent", 0, "the parent's pid: die with it")
)

var sink = &suspicions{}

// out writes the CSV lines, one whole line per write.
var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func emit(event, subject, detail string) {
	now := time.Now().UnixNano()
	out.Lock()
	fmt.Fprintf(out.w, "%d,%s,%s,%s,%s\n", now, *name, event, subject, detail)
	out.w.Flush()
	out.Unlock()
}

// events: memberlist's EventDelegate.
type events struct{}

func (events) NotifyJoin(n *memberlist.Node)   { emit("join", n.Name, "") }
func (events) NotifyLeave(n *memberlist.Node)  { emit("dead", n.Name, "") }
func (events) NotifyUpdate(n *memberlist.Node) {}

// logLines reads memberlist's log for the events no delegate reports.
type logLines struct{}

func (logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(string(p), "\n") {
		switch {
		case strings.Contains(line, "memberlist: Refuting a suspect message"):
			emit("refute", *name, "suspect")
		case strings.Contains(line, "memberlist: Refuting a dead message"):
			emit("refute", *name, "dead")
		case strings.Contains(line, "memberlist: Marking ") && strings.Contains(line, " as failed, suspect timeout reached"):
			rest := line[strings.Index(line, "memberlist: Marking ")+len("memberlist: Marking "):]
			emit("declare", rest[:strings.Index(rest, " as failed")], "")
		case strings.Contains(line, "memberlist: Suspect ") && strings.Contains(line, " has failed, no acks received"):
			rest := line[strings.Index(line, "memberlist: Suspect ")+len("memberlist: Suspect "):]
			sink.failedProbe(rest[:strings.Index(rest, " has failed")])
		case strings.Contains(line, "[ERR]"):
			emit("error", "", line[strings.Index(line, "[ERR]"):])
		}
	}
	return len(p), nil
}

// suspicions turns memberlist's suspect counter (raised in suspectNode
// each time the member moves another to Suspect, state.go:1175) into rows.
// The counter names no member; memberlist keeps its states unexported
// (nodeState.State shadows Node.State, which stays Alive). A suspicion of
// the member's own failed probe follows the log line naming its subject
// (state.go:494, on the same goroutine); one heard by gossip is written
// with an empty subject.
type suspicions struct {
	metrics.BlackholeSink
	mu       sync.Mutex
	probed   string
	probedAt time.Time
}

// probeWindow: how soon after its log line a suspicion is the probe's.
const probeWindow = 5 * time.Millisecond

func (s *suspicions) failedProbe(subject string) {
	s.mu.Lock()
	s.probed, s.probedAt = subject, time.Now()
	s.mu.Unlock()
}

func (s *suspicions) IncrCounterWithLabels(key []string, val float32, labels []metrics.Label) {
	if len(key) < 2 || key[len(key)-2] != "msg" || key[len(key)-1] != "suspect" {
		return
	}
	s.mu.Lock()
	subject, how := "", "gossip"
	if s.probed != "" && time.Since(s.probedAt) < probeWindow {
		subject, how = s.probed, "probe"
	}
	s.probed = ""
	s.mu.Unlock()
	emit("suspect", subject, how)
}

// counting is memberlist's NetTransport, counting what it sends.
type counting struct {
	*memberlist.NetTransport
	packets, streams int64
	accepted         chan net.Conn
}

func (c *counting) WriteTo(b []byte, addr string) (time.Time, error) {
	atomic.AddInt64(&c.packets, 1)
	return c.NetTransport.WriteTo(b, addr)
}

func (c *counting) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	atomic.AddInt64(&c.streams, 1)
	return c.NetTransport.DialTimeout(addr, timeout)
}

func (c *counting) WriteToAddress(b []byte, addr memberlist.Address) (time.Time, error) {
	atomic.AddInt64(&c.packets, 1)
	return c.NetTransport.WriteToAddress(b, addr)
}

func (c *counting) DialAddressTimeout(addr memberlist.Address, timeout time.Duration) (net.Conn, error) {
	atomic.AddInt64(&c.streams, 1)
	return c.NetTransport.DialAddressTimeout(addr, timeout)
}

func (c *counting) StreamCh() <-chan net.Conn { return c.accepted }

func (c *counting) forward() {
	for conn := range c.NetTransport.StreamCh() {
		atomic.AddInt64(&c.streams, 1)
		c.accepted <- conn
	}
}

func main() {
	flag.Parse()
	// Killed by the kernel when the parent dies, even by SIGKILL and even
	// while stopped; if it is already gone, nobody will.
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); e != 0 {
		fmt.Fprintln(os.Stderr, "prctl:", e)
		os.Exit(1)
	}
	if *parent != 0 && os.Getppid() != *parent {
		os.Exit(1)
	}
	if *name == "" {
		fmt.Fprintln(os.Stderr, "fdlab-memberlist-agent: -name is required")
		os.Exit(2)
	}
	mc := metrics.DefaultConfig("fdlab")
	mc.EnableHostname = false
	mc.EnableRuntimeMetrics = false
	if _, err := metrics.NewGlobal(mc, sink); err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}

	conf := memberlist.DefaultLANConfig()
	conf.Name = *name
	conf.BindAddr = "127.0.0.1"
	conf.AdvertiseAddr = "127.0.0.1"
	conf.ProbeInterval = *probeIv
	conf.ProbeTimeout = *probeTo
	conf.IndirectChecks = *indirect
	conf.SuspicionMult = *suspMult
	conf.SuspicionMaxTimeoutMult = *suspMax
	conf.GossipInterval = *gossipIv
	conf.GossipNodes = *gossipN
	conf.GossipToTheDeadTime = *toTheDead
	conf.RetransmitMult = *retransmit
	conf.AwarenessMaxMultiplier = *awareness
	conf.UDPBufferSize = *udpBuffer
	conf.PushPullInterval = *pushPull
	conf.DisableTcpPings = *noTCPPing
	conf.Events = events{}
	conf.LogOutput = logLines{}

	var nt *memberlist.NetTransport
	var err error
	// Port 0: the kernel picks the TCP port, and the UDP port must be the
	// same; another process may hold it, so try again.
	for attempt := 0; attempt < 20; attempt++ {
		nt, err = memberlist.NewNetTransport(&memberlist.NetTransportConfig{
			BindAddrs: []string{"127.0.0.1"},
			BindPort:  0,
			Logger:    nil,
		})
		if err == nil {
			break
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "transport:", err)
		os.Exit(1)
	}
	port := nt.GetAutoBindPort()
	conf.BindPort = port
	conf.AdvertisePort = port
	transport := &counting{NetTransport: nt, accepted: make(chan net.Conn)}
	go transport.forward()
	conf.Transport = transport

	m, err := memberlist.Create(conf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "memberlist:", err)
		os.Exit(1)
	}
	emit("ready", "", fmt.Sprint(port))

	go func() {
		for range time.Tick(time.Second) {
			emit("sent", "", fmt.Sprintf("%d/%d", atomic.LoadInt64(&transport.packets), atomic.LoadInt64(&transport.streams)))
		}
	}()

	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\n')
		if strings.HasPrefix(line, "join ") {
			addrs := strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "join ")), ",")
			if _, jerr := m.Join(addrs); jerr != nil {
				fmt.Fprintln(os.Stderr, *name+": join:", jerr)
			}
		}
		if err == io.EOF || err != nil {
			os.Exit(0)
		}
	}
}
