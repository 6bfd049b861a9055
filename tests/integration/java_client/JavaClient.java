// JavaClient drives the official Java Kafka client (kafka-clients 4.3.0, fetched by
// scripts/setup.sh) against a broker, for tests/integration/test_broker_java.py.
//
// Compile and run (no build tool; the jars are in .cache/java-kafka/lib):
//   javac -cp 'lib/*' -d out JavaClient.java && java -cp 'out:lib/*' JavaClient <cmd> [flags]
//
// Every subcommand prints JSON on stdout: produce, consume and ctp one object, admin one line
// per operation, member one line per event. A failure prints {"error": <exception class>,
// "message": ...} and exits 1. Flags common to all: --bootstrap B (required) and -X key=value
// (any client config, e.g. -X security.protocol=SASL_PLAINTEXT; repeatable).
//
//   produce --topic T --n N [--codec C] [--keys K] [--prefix P] [--value-size S] [--acks A]
//           [--partition P] [--transactional-id ID --txns commit,abort,...]
//       Sends N messages (or N per transaction). Message i has the value "<prefix>-<i>"
//       (padded with 'x' to S characters), the header i=<i> and, with K > 0, the key
//       "key-<i mod K>" (else a null key), so the default partitioner picks the partition.
//       Prints each message's partition, offset, timestamp (and its transaction's ending).
//
//   consume --topic T [--n N] [--group G] [--isolation L] [--commit] [--timeout-ms MS]
//       With --group: subscribes (auto.offset.reset=earliest). Without: assigns every partition
//       from the beginning. Stops after N messages or, without --n, once every partition's
//       position reached its end offset (the last stable offset under read_committed). With
//       --commit: commitSync, then prints the group's committed offsets.
//
//   member --topic T --group G [--session-ms MS]
//       A long-running group member: prints {"revoked": [...]} and {"assigned": [...]} (its
//       whole assignment) at each rebalance, and {"messages": [...]} for what each poll
//       returned, after committing it. The line "close" on stdin closes the consumer (leaving
//       the group) and exits.
//
//   ctp --input T --output O --group G --transactional-id ID --n N [--abort]
//       Consume-transform-produce: reads N messages of T in group G (read_committed) and, one
//       transaction per poll, sends "out-<value>" to O with the consumed offsets
//       (sendOffsetsToTransaction); commits the transactions, or aborts them with --abort.
//
//   admin
//       Reads operations from stdin, one per line (see runAdminOp), answers each with a line:
//       {"op": <line>, "ok": <result>} or {"op": <line>, "error": <exception class>, ...}.
//       A topic partition is written T:P, a config resource topic:T or broker:ID.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class JavaClient {
  private JavaClient() {}

  public static void main(String[] argv) throws Exception {
    if (argv.length < 1) {
      fail(new IllegalArgumentException("usage: JavaClient produce|consume|member|ctp|admin"));
    }
    Flags flags = new Flags(Arrays.copyOfRange(argv, 1, argv.length));
    try {
      switch (argv[0]) {
        case "produce" -> print(produce(flags));
        case "consume" -> print(consume(flags));
        case "member" -> member(flags);
        case "ctp" -> print(consumeTransformProduce(flags));
        case "admin" -> admin(flags);
        default -> throw new IllegalArgumentException("unknown subcommand " + argv[0]);
      }
    } catch (Exception e) {
      fail(e);
    }
    System.exit(0); // no lingering client threads
  }

  // ------------------------------------------------------------------------------- produce

  static Map<String, Object> produce(Flags f) throws Exception {
    Properties props = f.clientProps();
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, f.get("codec", "none"));
    props.put(ProducerConfig.ACKS_CONFIG, f.get("acks", "all"));
    props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
    String txnId = f.get("transactional-id", null);
    if (txnId != null) {
      props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
    }
    List<String> txns = txnId == null ? List.of("none") : f.list("txns");
    int n = f.integer("n", 100);
    List<Map<String, Object>> out = new ArrayList<>();
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      if (txnId != null) {
        producer.initTransactions();
      }
      int i = 0;
      for (String ending : txns) {
        if (txnId != null) {
          producer.beginTransaction();
        }
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int j = 0; j < n; j++, i++) {
          ProducerRecord<String, String> record = message(f, i);
          records.add(record);
          acks.add(producer.send(record));
        }
        producer.flush();
        for (int j = 0; j < n; j++) {
          Map<String, Object> m = sent(records.get(j), acks.get(j).get(30, TimeUnit.SECONDS));
          m.put("txn", ending);
          out.add(m);
        }
        if (ending.equals("commit")) {
          producer.commitTransaction();
        } else if (ending.equals("abort")) {
          producer.abortTransaction();
        }
      }
    }
    return Map.of("messages", out);
  }

  static ProducerRecord<String, String> message(Flags f, int i) {
    int keys = f.integer("keys", 0);
    String key = keys > 0 ? "key-" + (i % keys) : null;
    Integer partition = f.has("partition") ? f.integer("partition", 0) : null;
    RecordHeaders headers = new RecordHeaders();
    headers.add("i", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
    StringBuilder value = new StringBuilder(f.get("prefix", "m") + "-" + i);
    while (value.length() < f.integer("value-size", 0)) {
      value.append('x');
    }
    return new ProducerRecord<>(f.required("topic"), partition, null, key, value.toString(), headers);
  }

  static Map<String, Object> sent(ProducerRecord<String, String> r, RecordMetadata md) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", md.partition());
    m.put("offset", md.hasOffset() ? md.offset() : null);
    m.put("timestamp_ms", md.hasTimestamp() ? md.timestamp() : null);
    m.put("key", r.key());
    m.put("value", r.value());
    return m;
  }

  // ------------------------------------------------------------------------------- consume

  static Properties consumerProps(Flags f, String group) {
    Properties props = f.clientProps();
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, f.get("isolation", "read_uncommitted"));
    if (props.getProperty(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic").equals("classic")) {
      props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, f.get("session-ms", "10000"));
      props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    }
    if (group != null) {
      props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    }
    return props;
  }

  static Map<String, Object> consume(Flags f) throws Exception {
    String topic = f.required("topic");
    String group = f.get("group", null);
    int n = f.integer("n", -1);
    long deadline = System.currentTimeMillis() + f.integer("timeout-ms", 30000);
    List<Map<String, Object>> got = new ArrayList<>();
    Map<String, Object> out = new LinkedHashMap<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(f, group))) {
      if (group != null) {
        consumer.subscribe(List.of(topic));
      } else {
        List<TopicPartition> tps = new ArrayList<>();
        consumer.partitionsFor(topic).forEach(p -> tps.add(new TopicPartition(topic, p.partition())));
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
      }
      while (System.currentTimeMillis() < deadline && (n < 0 || got.size() < n)) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          got.add(received(r));
        }
        if (n < 0 && !consumer.assignment().isEmpty() && atEnd(consumer)) {
          break;
        }
      }
      out.put("assigned", partitions(consumer.assignment()));
      out.put("positions", positions(consumer));
      if (f.has("commit")) {
        consumer.commitSync();
        out.put("committed", committed(consumer.committed(consumer.assignment())));
      }
    }
    out.put("messages", got);
    return out;
  }

  static boolean atEnd(KafkaConsumer<String, String> consumer) {
    Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment());
    for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
      if (consumer.position(e.getKey()) < e.getValue()) {
        return false;
      }
    }
    return true;
  }

  static Map<String, Object> received(ConsumerRecord<String, String> r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("partition", r.partition());
    m.put("offset", r.offset());
    m.put("key", r.key());
    m.put("value", r.value());
    Map<String, Object> headers = new LinkedHashMap<>();
    for (Header h : r.headers()) {
      headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
    }
    m.put("headers", headers);
    m.put("timestamp_ms", r.timestamp());
    m.put("timestamp_type", r.timestampType().name);
    m.put("leader_epoch", r.leaderEpoch().orElse(-1));
    return m;
  }

  static Map<String, Object> positions(KafkaConsumer<String, String> consumer) {
    Map<String, Object> out = new TreeMap<>();
    for (TopicPartition tp : consumer.assignment()) {
      out.put(Integer.toString(tp.partition()), consumer.position(tp));
    }
    return out;
  }

  static Map<String, Object> committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
    Map<String, Object> out = new TreeMap<>();
    offsets.forEach((tp, om) -> out.put(tp.topic() + ":" + tp.partition(), om == null ? null : om.offset()));
    return out;
  }

  static List<Integer> partitions(Collection<TopicPartition> tps) {
    List<Integer> out = new ArrayList<>();
    tps.forEach(tp -> out.add(tp.partition()));
    out.sort(null);
    return out;
  }

  // -------------------------------------------------------------------------------- member

  static void member(Flags f) throws Exception {
    KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(f, f.required("group")));
    final boolean[] closing = {false};
    Thread stdin = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null && !line.strip().equals("close"); line = in.readLine()) {
          // only "close" (or the end of stdin) means anything
        }
      } catch (Exception e) {
        // treat as close
      }
      synchronized (closing) {
        closing[0] = true;
      }
      consumer.wakeup();
    });
    stdin.setDaemon(true);
    stdin.start();
    consumer.subscribe(List.of(f.required("topic")), new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
        if (!revoked.isEmpty()) {
          print(Map.of("revoked", partitions(revoked)));
        }
      }

      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> added) {
        print(Map.of("assigned", partitions(consumer.assignment())));
      }
    });
    while (true) {
      try {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        if (!records.isEmpty()) {
          consumer.commitSync();
          List<Map<String, Object>> got = new ArrayList<>();
          records.forEach(r -> got.add(received(r)));
          print(Map.of("messages", got));
        }
      } catch (WakeupException e) {
        synchronized (closing) {
          if (closing[0]) {
            break;
          }
        }
      }
    }
    consumer.close();
    print(Map.of("closed", true));
  }

  // ----------------------------------------------------------------------------------- ctp

  static Map<String, Object> consumeTransformProduce(Flags f) throws Exception {
    Flags consumerFlags = f.with("isolation", "read_committed");
    Properties pprops = f.clientProps();
    pprops.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    pprops.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    pprops.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, f.required("transactional-id"));
    int n = f.integer("n", 0);
    boolean abort = f.has("abort");
    String output = f.required("output");
    int transactions = 0;
    int taken = 0;
    long deadline = System.currentTimeMillis() + 30000;
    try (KafkaConsumer<String, String> consumer =
            new KafkaConsumer<>(consumerProps(consumerFlags, f.required("group")));
        KafkaProducer<String, String> producer = new KafkaProducer<>(pprops)) {
      producer.initTransactions();
      consumer.subscribe(List.of(f.required("input")));
      while (taken < n && System.currentTimeMillis() < deadline) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) {
          continue;
        }
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<String, String> r : records) {
          producer.send(new ProducerRecord<>(output, r.key(), "out-" + r.value()));
          offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
          taken++;
        }
        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
        if (abort) {
          producer.abortTransaction();
        } else {
          producer.commitTransaction();
        }
        transactions++;
      }
    }
    return Map.of("taken", taken, "transactions", transactions);
  }

  // --------------------------------------------------------------------------------- admin

  static void admin(Flags f) throws Exception {
    Properties props = f.clientProps();
    props.put("default.api.timeout.ms", "15000");
    props.put("request.timeout.ms", "10000");
    try (Admin admin = Admin.create(props);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.isBlank()) {
          continue;
        }
        List<String> words = Arrays.asList(line.strip().split("\\s+"));
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("op", line.strip());
        try {
          answer.put("ok", runAdminOp(admin, words.get(0), words.subList(1, words.size())));
        } catch (ExecutionException e) {
          error(answer, e.getCause());
        } catch (Exception e) {
          error(answer, e);
        }
        print(answer);
      }
    }
  }

  static void error(Map<String, Object> answer, Throwable e) {
    answer.put("error", e.getClass().getSimpleName());
    answer.put("message", e.getMessage());
    Throwable root = e;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    if (root != e) {
      answer.put("cause", root.getClass().getSimpleName() + ": " + root.getMessage());
    }
  }

  /** One admin operation: its name and arguments as words of a line. */
  static Object runAdminOp(Admin admin, String op, List<String> a) throws Exception {
    return switch (op) {
      case "describe-cluster" -> describeCluster(admin.describeCluster());
      case "create" -> {
        NewTopic topic = new NewTopic(a.get(0), Integer.parseInt(a.get(1)), (short) 1);
        topic.configs(keyValues(a.subList(2, a.size())));
        CreateTopicsResult created = admin.createTopics(List.of(topic));
        created.all().get();
        Config config = created.config(a.get(0)).get();
        Map<String, Object> out = new TreeMap<>();
        out.put("partitions", created.numPartitions(a.get(0)).get());
        out.put("replication", created.replicationFactor(a.get(0)).get());
        out.put("topic_id", created.topicId(a.get(0)).get().toString());
        for (ConfigEntry e : config.entries()) {
          out.put(e.name(), e.value() + " " + e.source().name());
        }
        yield out;
      }
      case "list" -> new ArrayList<>(new TreeMap<>(toMap(admin.listTopics().names().get())).keySet());
      case "describe-topics" -> describeTopics(admin.describeTopics(a).allTopicNames().get());
      case "create-partitions" -> {
        admin.createPartitions(Map.of(a.get(0), NewPartitions.increaseTo(Integer.parseInt(a.get(1))))).all().get();
        yield true;
      }
      case "describe-configs" -> describeConfigs(admin, configResource(a.get(0)));
      case "set-config", "delete-config" -> {
        ConfigResource resource = configResource(a.get(0));
        List<AlterConfigOp> ops = new ArrayList<>();
        for (String kv : a.subList(1, a.size())) {
          String[] parts = kv.split("=", 2);
          AlterConfigOp.OpType type = op.equals("set-config") ? AlterConfigOp.OpType.SET : AlterConfigOp.OpType.DELETE;
          ops.add(new AlterConfigOp(new ConfigEntry(parts[0], parts.length > 1 ? parts[1] : null), type));
        }
        admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
        yield true;
      }
      // one incrementalAlterConfigs of the ops given as TYPE:key=value (TYPE an OpType name:
      // SET, DELETE, APPEND, SUBTRACT; no "=value" sends a null value), in order, repeats kept
      case "alter-config" -> {
        List<AlterConfigOp> ops = new ArrayList<>();
        for (String word : a.subList(1, a.size())) {
          String[] typed = word.split(":", 2);
          String[] parts = typed[1].split("=", 2);
          ConfigEntry entry = new ConfigEntry(parts[0], parts.length > 1 ? parts[1] : null);
          ops.add(new AlterConfigOp(entry, AlterConfigOp.OpType.valueOf(typed[0])));
        }
        admin.incrementalAlterConfigs(Map.of(configResource(a.get(0)), ops)).all().get();
        yield true;
      }
      case "delete-topics" -> {
        admin.deleteTopics(a).all().get();
        yield true;
      }
      case "list-offsets" -> listOffsets(admin, a.get(0), a.get(1));
      case "delete-records" -> {
        TopicPartition tp = topicPartition(a.get(0));
        RecordsToDelete before = RecordsToDelete.beforeOffset(Long.parseLong(a.get(1)));
        yield admin.deleteRecords(Map.of(tp, before)).lowWatermarks().get(tp).get().lowWatermark();
      }
      case "list-groups" -> listGroups(admin);
      // listGroups (Java 4.x) for consumer groups in the states named (GroupState names; none:
      // every state), sorted by group id
      case "list-groups-in" -> listGroupsIn(admin, a);
      case "describe-groups" -> describeGroups(admin.describeConsumerGroups(a).all().get());
      case "group-offsets" -> committed(admin.listConsumerGroupOffsets(a.get(0)).partitionsToOffsetAndMetadata().get());
      // each committed offset with its leader epoch (null: none)
      case "group-offsets-epochs" -> {
        Map<String, Object> out = new TreeMap<>();
        admin.listConsumerGroupOffsets(a.get(0)).partitionsToOffsetAndMetadata().get().forEach((tp, om) -> {
          Map<String, Object> entry = new LinkedHashMap<>();
          entry.put("offset", om.offset());
          entry.put("leader_epoch", om.leaderEpoch().orElse(null));
          out.put(tp.topic() + ":" + tp.partition(), entry);
        });
        yield out;
      }
      case "delete-groups" -> {
        admin.deleteConsumerGroups(a).all().get();
        yield true;
      }
      case "alter-group-offsets" -> {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        // TOPIC:PARTITION=OFFSET, or =OFFSET@EPOCH to commit a leader epoch with it
        keyValues(a.subList(1, a.size())).forEach((tp, offset) -> {
          String[] at = offset.split("@", 2);
          Optional<Integer> epoch = at.length > 1 ? Optional.of(Integer.parseInt(at[1])) : Optional.empty();
          offsets.put(topicPartition(tp), new OffsetAndMetadata(Long.parseLong(at[0]), epoch, ""));
        });
        admin.alterConsumerGroupOffsets(a.get(0), offsets).all().get();
        yield true;
      }
      case "delete-group-offsets" -> {
        Set<TopicPartition> tps = new HashSet<>();
        a.subList(1, a.size()).forEach(tp -> tps.add(topicPartition(tp)));
        admin.deleteConsumerGroupOffsets(a.get(0), tps).all().get();
        yield true;
      }
      // answers reduced to a count: their contents are checked with other clients
      case "describe-log-dirs" -> admin.describeLogDirs(List.of(0)).allDescriptions().get().size();
      case "list-transactions" -> admin.listTransactions().all().get().size();
      case "describe-producers" ->
          admin.describeProducers(List.of(topicPartition(a.get(0)))).all().get().size();
      // kafka-transactions.sh abort: find the producer holding a transaction open, abort it
      case "abort-open-transaction" -> abortOpenTransaction(admin, topicPartition(a.get(0)));
      default -> throw new IllegalArgumentException("unknown admin operation " + op);
    };
  }

  /** Abort (WriteTxnMarkers, KIP-664) the transaction open on {@code tp}; its producer id. */
  static long abortOpenTransaction(Admin admin, TopicPartition tp) throws Exception {
    for (ProducerState p : admin.describeProducers(List.of(tp)).partitionResult(tp).get()
        .activeProducers()) {
      if (p.currentTransactionStartOffset().isPresent()) {
        short epoch = (short) p.producerEpoch();
        int coordinatorEpoch = p.coordinatorEpoch().orElse(-1);
        admin.abortTransaction(new AbortTransactionSpec(tp, p.producerId(), epoch, coordinatorEpoch))
            .all().get();
        return p.producerId();
      }
    }
    return -1;
  }

  static Map<String, Object> describeCluster(DescribeClusterResult r) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("cluster_id", r.clusterId().get());
    out.put("controller", r.controller().get().id());
    List<Object> nodes = new ArrayList<>();
    for (Node n : r.nodes().get()) {
      nodes.add(Map.of("id", n.id(), "host", n.host(), "port", n.port()));
    }
    out.put("nodes", nodes);
    return out;
  }

  static Map<String, Object> describeTopics(Map<String, TopicDescription> topics) {
    Map<String, Object> out = new TreeMap<>();
    topics.forEach((name, d) -> {
      List<Object> parts = new ArrayList<>();
      for (TopicPartitionInfo p : d.partitions()) {
        parts.add(Map.of("partition", p.partition(), "leader", p.leader().id(), "replicas", p.replicas().size(), "isr", p.isr().size()));
      }
      out.put(name, Map.of("internal", d.isInternal(), "topic_id", d.topicId().toString(), "partitions", parts));
    });
    return out;
  }

  static ConfigResource configResource(String spec) {
    // "topic:NAME", "broker:ID" or "broker-logger:ID"
    String[] parts = spec.split(":", 2);
    ConfigResource.Type type = switch (parts[0]) {
      case "broker" -> ConfigResource.Type.BROKER;
      case "broker-logger" -> ConfigResource.Type.BROKER_LOGGER;
      default -> ConfigResource.Type.TOPIC;
    };
    return new ConfigResource(type, parts[1]);
  }

  static Map<String, Object> describeConfigs(Admin admin, ConfigResource resource) throws Exception {
    Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
    Map<String, Object> out = new TreeMap<>();
    for (ConfigEntry e : config.entries()) {
      out.put(e.name(), Map.of("value", String.valueOf(e.value()), "source", e.source().name(), "sensitive", e.isSensitive()));
    }
    return out;
  }

  static Object listOffsets(Admin admin, String tpSpec, String spec) throws Exception {
    TopicPartition tp = topicPartition(tpSpec);
    OffsetSpec offsetSpec = switch (spec) {
      case "earliest" -> OffsetSpec.earliest();
      case "latest" -> OffsetSpec.latest();
      case "max-timestamp" -> OffsetSpec.maxTimestamp();
      case "earliest-local" -> OffsetSpec.earliestLocal();
      case "latest-tiered" -> OffsetSpec.latestTiered();
      default -> OffsetSpec.forTimestamp(Long.parseLong(spec));
    };
    ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, offsetSpec)).partitionResult(tp).get();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("offset", info.offset());
    out.put("timestamp_ms", info.timestamp());
    return out;
  }

  @SuppressWarnings("deprecation")
  static List<Object> listGroups(Admin admin) throws Exception {
    List<Object> out = new ArrayList<>();
    for (ConsumerGroupListing g : admin.listConsumerGroups().all().get()) {
      out.add(Map.of("group", g.groupId(), "simple", g.isSimpleConsumerGroup(), "state", String.valueOf(g.groupState().orElse(null))));
    }
    return out;
  }

  static List<Object> listGroupsIn(Admin admin, List<String> states) throws Exception {
    Set<GroupState> wanted = new HashSet<>();
    states.forEach(s -> wanted.add(GroupState.valueOf(s)));
    ListGroupsOptions options = ListGroupsOptions.forConsumerGroups().inGroupStates(wanted);
    Map<String, Object> byId = new TreeMap<>();
    for (GroupListing g : admin.listGroups(options).all().get()) {
      byId.put(g.groupId(), Map.of(
          "group", g.groupId(),
          "state", String.valueOf(g.groupState().orElse(null)),
          "type", String.valueOf(g.type().orElse(null))));
    }
    return new ArrayList<>(byId.values());
  }

  static Map<String, Object> describeGroups(Map<String, ConsumerGroupDescription> groups) {
    Map<String, Object> out = new TreeMap<>();
    groups.forEach((id, d) -> {
      List<Object> members = new ArrayList<>();
      for (MemberDescription m : d.members()) {
        members.add(Map.of("client_id", m.clientId(), "partitions", partitions(m.assignment().topicPartitions())));
      }
      Map<String, Object> g = new LinkedHashMap<>();
      g.put("state", d.groupState().name());
      g.put("assignor", d.partitionAssignor());
      g.put("coordinator", d.coordinator().id());
      g.put("members", members);
      out.put(id, g);
    });
    return out;
  }

  static TopicPartition topicPartition(String spec) {
    int colon = spec.lastIndexOf(':');
    return new TopicPartition(spec.substring(0, colon), Integer.parseInt(spec.substring(colon + 1)));
  }

  static Map<String, String> keyValues(List<String> words) {
    Map<String, String> out = new HashMap<>();
    for (String kv : words) {
      String[] parts = kv.split("=", 2);
      out.put(parts[0], parts[1]);
    }
    return out;
  }

  static Map<String, Object> toMap(Set<String> names) {
    Map<String, Object> out = new HashMap<>();
    names.forEach(n -> out.put(n, true));
    return out;
  }

  // ----------------------------------------------------------------------- flags, JSON, errors

  /** --name value, --switch, and -X key=value (client configs). */
  static final class Flags {
    final Map<String, String> values = new HashMap<>();
    final Properties client = new Properties();

    Flags(String[] args) {
      for (int i = 0; i < args.length; i++) {
        if (args[i].equals("-X")) {
          String[] kv = args[++i].split("=", 2);
          client.put(kv[0], kv[1]);
        } else if (args[i].startsWith("--")) {
          boolean hasValue = i + 1 < args.length && !args[i + 1].startsWith("-");
          values.put(args[i].substring(2), hasValue ? args[++i] : "true");
        } else {
          throw new IllegalArgumentException("unexpected argument " + args[i]);
        }
      }
    }

    Flags with(String name, String value) {
      Flags copy = new Flags(new String[0]);
      copy.values.putAll(values);
      copy.client.putAll(client);
      copy.values.put(name, value);
      return copy;
    }

    boolean has(String name) {
      return values.containsKey(name);
    }

    String get(String name, String fallback) {
      return values.getOrDefault(name, fallback);
    }

    String required(String name) {
      String v = values.get(name);
      if (v == null) {
        throw new IllegalArgumentException("--" + name + " is required");
      }
      return v;
    }

    int integer(String name, int fallback) {
      return has(name) ? Integer.parseInt(values.get(name)) : fallback;
    }

    List<String> list(String name) {
      return Arrays.asList(required(name).split(","));
    }

    Properties clientProps() {
      Properties props = new Properties();
      props.put("bootstrap.servers", required("bootstrap"));
      props.put("client.id", "java-integration-test");
      props.putAll(client);
      return props;
    }
  }

  static synchronized void print(Object value) {
    StringBuilder sb = new StringBuilder();
    json(sb, value);
    System.out.println(sb);
    System.out.flush();
  }

  static void fail(Throwable e) {
    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    cause.printStackTrace();
    Map<String, Object> out = new LinkedHashMap<>();
    error(out, cause);
    print(out);
    System.exit(1);
  }

  static void json(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String s) {
      sb.append('"');
      for (char c : s.toCharArray()) {
        switch (c) {
          case '"' -> sb.append("\\\"");
          case '\\' -> sb.append("\\\\");
          case '\n' -> sb.append("\\n");
          default -> {
            if (c < 0x20) {
              sb.append(String.format("\\u%04x", (int) c));
            } else {
              sb.append(c);
            }
          }
        }
      }
      sb.append('"');
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      Iterator<? extends Map.Entry<?, ?>> it = m.entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<?, ?> e = it.next();
        json(sb, String.valueOf(e.getKey()));
        sb.append(':');
        json(sb, e.getValue());
        sb.append(it.hasNext() ? "," : "");
      }
      sb.append('}');
    } else if (v instanceof Collection<?> c) {
      sb.append('[');
      Iterator<?> it = c.iterator();
      while (it.hasNext()) {
        json(sb, it.next());
        sb.append(it.hasNext() ? "," : "");
      }
      sb.append(']');
    } else {
      json(sb, v.toString());
    }
  }
}
