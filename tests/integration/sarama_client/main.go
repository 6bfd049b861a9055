// Command sarama_client drives the Go Kafka client Sarama (Debian's
// golang-github-shopify-sarama-dev, 1.22) against a broker, for the
// integration tests in tests/integration/test_broker_sarama.py.
//
// Every subcommand prints one JSON document on stdout and exits 0, or prints
// an error on stderr and exits 1. With -v, Sarama's own log goes to stderr.
//
//	produce -brokers B -topic T -n N [-codec none|gzip|snappy|lz4|zstd]
//	        [-keys K] [-prefix P] [-value-size S] [-idempotent]
//	    Sends N messages with a SyncProducer (acks=all). Message i has the value
//	    "<prefix>-<i>" (padded with 'x' to S bytes), the header i=<i> and, when
//	    K > 0, the key "key-<i mod K>" (Sarama's hash partitioner picks the
//	    partition). Prints every message's partition and offset.
//
//	consume -brokers B -topic T -partition P -n N [-offset O]
//	    Reads N messages from one partition with a PartitionConsumer, starting
//	    at offset O (-2 = oldest, the default). Prints them and the partition's
//	    high-water mark.
//
//	group -brokers B -topic T -group G -n N [-retention D]
//	    Joins consumer group G with a ConsumerGroup, takes N messages (marking
//	    each one), leaves the group (which commits the marked offsets), then
//	    reads the group's committed offsets back with an OffsetManager.
//	    Sarama 1.22 commits with OffsetCommit v1 when Consumer.Offsets.Retention
//	    is 0 (its default, and this flag's) and with v2 otherwise.
//
// Common flags: -version (the Kafka version Sarama assumes, default 2.1.0:
// Sarama 1.22 does not negotiate versions, it derives every request version
// from this setting) and -timeout (how long to wait for the messages).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

// Message is one record as produced or consumed.
type Message struct {
	Partition int32             `json:"partition"`
	Offset    int64             `json:"offset"`
	Key       *string           `json:"key"` // null for a null key
	Value     string            `json:"value"`
	Headers   map[string]string `json:"headers,omitempty"`
	Timestamp int64             `json:"timestamp_ms,omitempty"`
}

// common holds the flags every subcommand takes.
type common struct {
	brokers string
	topic   string
	version string
	timeout time.Duration
	verbose bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.brokers, "brokers", "", "comma-separated bootstrap servers (required)")
	fs.StringVar(&c.topic, "topic", "", "topic (required)")
	fs.StringVar(&c.version, "version", "2.1.0", "Kafka version Sarama assumes")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "how long to wait for the messages")
	fs.BoolVar(&c.verbose, "v", false, "log Sarama's internals to stderr")
}

// config checks the common flags and returns a Sarama config for them.
func (c *common) config() (*sarama.Config, error) {
	if c.brokers == "" || c.topic == "" {
		return nil, errors.New("-brokers and -topic are required")
	}
	version, err := sarama.ParseKafkaVersion(c.version)
	if err != nil {
		return nil, err
	}
	if c.verbose {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.Lmicroseconds)
	}
	cfg := sarama.NewConfig()
	cfg.ClientID = "sarama-integration-test"
	cfg.Version = version
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	return cfg, nil
}

func (c *common) addrs() []string { return strings.Split(c.brokers, ",") }

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: sarama_client produce|consume|group [flags]"))
	}
	var out interface{}
	var err error
	switch os.Args[1] {
	case "produce":
		out, err = produce(os.Args[2:])
	case "consume":
		out, err = consume(os.Args[2:])
	case "group":
		out, err = group(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "sarama_client: %v\n", err)
	os.Exit(1)
}

var codecs = map[string]sarama.CompressionCodec{
	"none":   sarama.CompressionNone,
	"gzip":   sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy,
	"lz4":    sarama.CompressionLZ4,
	"zstd":   sarama.CompressionZSTD,
}

// ProduceResult is what `produce` prints.
type ProduceResult struct {
	Messages []Message `json:"messages"`
}

func produce(args []string) (interface{}, error) {
	var c common
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	c.register(fs)
	n := fs.Int("n", 100, "number of messages")
	codecName := fs.String("codec", "none", "compression: none, gzip, snappy, lz4 or zstd")
	keys := fs.Int("keys", 0, "number of distinct keys (0: null keys)")
	prefix := fs.String("prefix", "m", "value prefix")
	valueSize := fs.Int("value-size", 0, "pad values with 'x' to this many bytes")
	idempotent := fs.Bool("idempotent", false, "idempotent producer")
	_ = fs.Parse(args)

	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	codec, ok := codecs[*codecName]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", *codecName)
	}
	cfg.Producer.Compression = codec
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Timeout = c.timeout
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond // batch: many records per compressed batch
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	if *idempotent {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1 // required by Sarama for idempotence
	}

	producer, err := sarama.NewSyncProducer(c.addrs(), cfg)
	if err != nil {
		return nil, fmt.Errorf("new producer: %w", err)
	}
	msgs := make([]*sarama.ProducerMessage, *n)
	for i := range msgs {
		value := fmt.Sprintf("%s-%d", *prefix, i)
		if pad := *valueSize - len(value); pad > 0 {
			value += strings.Repeat("x", pad)
		}
		msgs[i] = &sarama.ProducerMessage{
			Topic:   c.topic,
			Value:   sarama.StringEncoder(value),
			Headers: []sarama.RecordHeader{{Key: []byte("i"), Value: []byte(strconv.Itoa(i))}},
		}
		if *keys > 0 {
			msgs[i].Key = sarama.StringEncoder(fmt.Sprintf("key-%d", i%*keys))
		}
	}
	sent := make(chan error, 1)
	go func() { sent <- producer.SendMessages(msgs) }()
	select {
	case err := <-sent:
		closeErr := producer.Close()
		var perrs sarama.ProducerErrors
		switch {
		case errors.As(err, &perrs) && len(perrs) > 0:
			return nil, fmt.Errorf("%d of %d messages failed, first: %w", len(perrs), *n, perrs[0].Err)
		case err != nil:
			return nil, fmt.Errorf("send: %w", err)
		case closeErr != nil:
			return nil, fmt.Errorf("close producer: %w", closeErr)
		}
	case <-time.After(c.timeout):
		return nil, fmt.Errorf("messages not acknowledged in %v", c.timeout) // no Close: it would wait too
	}

	result := ProduceResult{Messages: make([]Message, 0, *n)}
	for _, m := range msgs {
		result.Messages = append(result.Messages, fromProducerMessage(m))
	}
	return result, nil
}

func fromProducerMessage(m *sarama.ProducerMessage) Message {
	value, _ := m.Value.Encode()
	out := Message{Partition: m.Partition, Offset: m.Offset, Value: string(value)}
	if m.Key != nil {
		key, _ := m.Key.Encode()
		s := string(key)
		out.Key = &s
	}
	return out
}

func fromConsumerMessage(m *sarama.ConsumerMessage) Message {
	out := Message{
		Partition: m.Partition,
		Offset:    m.Offset,
		Value:     string(m.Value),
		Timestamp: m.Timestamp.UnixNano() / int64(time.Millisecond),
	}
	if m.Key != nil {
		s := string(m.Key)
		out.Key = &s
	}
	if len(m.Headers) > 0 {
		out.Headers = make(map[string]string, len(m.Headers))
		for _, h := range m.Headers {
			out.Headers[string(h.Key)] = string(h.Value)
		}
	}
	return out
}

// ConsumeResult is what `consume` prints.
type ConsumeResult struct {
	Messages      []Message `json:"messages"`
	HighWaterMark int64     `json:"high_water_mark"`
}

func consume(args []string) (interface{}, error) {
	var c common
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	c.register(fs)
	partition := fs.Int("partition", 0, "partition")
	offset := fs.Int64("offset", sarama.OffsetOldest, "first offset (-2 oldest, -1 newest)")
	n := fs.Int("n", 100, "number of messages to read")
	_ = fs.Parse(args)

	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	consumer, err := sarama.NewConsumer(c.addrs(), cfg)
	if err != nil {
		return nil, fmt.Errorf("new consumer: %w", err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(c.topic, int32(*partition), *offset)
	if err != nil {
		return nil, fmt.Errorf("consume partition %d: %w", *partition, err)
	}
	defer pc.AsyncClose()

	result := ConsumeResult{Messages: make([]Message, 0, *n)}
	deadline := time.After(c.timeout)
	for len(result.Messages) < *n {
		select {
		case m := <-pc.Messages():
			result.Messages = append(result.Messages, fromConsumerMessage(m))
		case cerr := <-pc.Errors():
			return nil, fmt.Errorf("partition consumer: %w", cerr)
		case <-deadline:
			return nil, fmt.Errorf("timed out with %d of %d messages", len(result.Messages), *n)
		}
	}
	result.HighWaterMark = pc.HighWaterMarkOffset()
	return result, nil
}

// GroupResult is what `group` prints: the partitions of the member's last
// assignment, the messages it took from each partition (in order) and, for
// every partition of the topic, the group's committed offset (-1: none).
type GroupResult struct {
	Assigned  []int32             `json:"assigned"`
	Messages  map[int32][]Message `json:"messages"`
	Committed map[int32]int64     `json:"committed"`
}

// groupHandler takes messages until it has `want`, marking each one taken.
type groupHandler struct {
	want int
	done context.CancelFunc

	mu       sync.Mutex
	taken    int
	assigned []int32
	messages map[int32][]Message
}

func (h *groupHandler) Setup(sess sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.assigned = nil // a new session (after a rebalance) has a new assignment
	for _, partitions := range sess.Claims() {
		h.assigned = append(h.assigned, partitions...)
	}
	sort.Slice(h.assigned, func(i, j int) bool { return h.assigned[i] < h.assigned[j] })
	return nil
}

func (h *groupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *groupHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.take(sess, m)
		case <-sess.Context().Done():
			return nil
		}
	}
}

func (h *groupHandler) take(sess sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.taken >= h.want {
		return // not marked: the next member of the group gets it
	}
	h.messages[m.Partition] = append(h.messages[m.Partition], fromConsumerMessage(m))
	sess.MarkMessage(m, "")
	h.taken++
	if h.taken == h.want {
		h.done()
	}
}

func group(args []string) (interface{}, error) {
	var c common
	fs := flag.NewFlagSet("group", flag.ExitOnError)
	c.register(fs)
	groupID := fs.String("group", "", "consumer group id (required)")
	n := fs.Int("n", 100, "number of messages to take")
	retention := fs.Duration("retention", 0,
		"offset retention; 0 makes Sarama 1.22 commit with OffsetCommit v1, >0 with v2")
	_ = fs.Parse(args)

	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	if *groupID == "" {
		return nil, errors.New("-group is required")
	}
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.Retention = *retention
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second

	cg, err := sarama.NewConsumerGroup(c.addrs(), *groupID, cfg)
	if err != nil {
		return nil, fmt.Errorf("new consumer group: %w", err)
	}
	var (
		errMu     sync.Mutex
		groupErrs []error
		drained   = make(chan struct{})
	)
	go func() {
		defer close(drained)
		for e := range cg.Errors() {
			errMu.Lock()
			groupErrs = append(groupErrs, e)
			errMu.Unlock()
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &groupHandler{want: *n, done: cancel, messages: map[int32][]Message{}}
	timer := time.AfterFunc(c.timeout, cancel)
	var consumeErr error
	for ctx.Err() == nil && consumeErr == nil {
		consumeErr = cg.Consume(ctx, []string{c.topic}, h) // returns at each rebalance
	}
	timedOut := !timer.Stop()
	closeErr := cg.Close() // leaves the group after the final commit of the marked offsets
	<-drained
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case consumeErr != nil:
		return nil, fmt.Errorf("consume: %w", consumeErr)
	case len(groupErrs) > 0:
		return nil, fmt.Errorf("consumer group reported %d errors, first: %w", len(groupErrs), groupErrs[0])
	case closeErr != nil:
		return nil, fmt.Errorf("close consumer group: %w", closeErr)
	case timedOut && h.taken < *n:
		return nil, fmt.Errorf("timed out with %d of %d messages", h.taken, *n)
	}

	committed, err := committedOffsets(c.addrs(), cfg, *groupID, c.topic)
	if err != nil {
		return nil, err
	}
	return GroupResult{Assigned: h.assigned, Messages: h.messages, Committed: committed}, nil
}

// committedOffsets reads the group's committed offset of every partition of
// the topic (OffsetFetch through a fresh client's OffsetManager).
func committedOffsets(addrs []string, cfg *sarama.Config, groupID, topic string) (map[int32]int64, error) {
	cfg.Consumer.Offsets.Initial = sarama.OffsetNewest // -1: what NextOffset reports when nothing is committed
	// A PartitionOffsetManager's Close waits for the manager's next tick: keep them short.
	cfg.Consumer.Offsets.CommitInterval = 50 * time.Millisecond
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	defer client.Close()
	partitions, err := client.Partitions(topic)
	if err != nil {
		return nil, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	om, err := sarama.NewOffsetManagerFromClient(groupID, client)
	if err != nil {
		return nil, fmt.Errorf("offset manager: %w", err)
	}
	defer om.Close()
	committed := make(map[int32]int64, len(partitions))
	for _, p := range partitions {
		pom, err := om.ManagePartition(topic, p)
		if err != nil {
			return nil, fmt.Errorf("committed offset of partition %d: %w", p, err)
		}
		committed[p], _ = pom.NextOffset()
		if err := pom.Close(); err != nil {
			return nil, fmt.Errorf("close partition offset manager: %w", err)
		}
	}
	return committed, nil
}
