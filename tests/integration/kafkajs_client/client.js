#!/usr/bin/env node
/*
 * A small KafkaJS (npm `kafkajs`, pure JavaScript) command-line client that
 * tests/integration/test_broker_kafkajs.py runs against a `tiered-mq dev` broker.
 *
 * Every command prints one JSON object (its summary) on stdout and exits 0; on failure it
 * prints "kafkajs client: <command> failed: <reason>" on stderr and exits 1. KafkaJS's own log
 * goes to stderr (level WARN; KAFKAJS_LOG_LEVEL=DEBUG shows every request and the API
 * versions it negotiated).
 *
 *   node client.js produce --brokers B --topic T --n N [--codec none|gzip] [--idempotent]
 *                          [--keys K] [--prefix P] [--batch S] [--interval-ms MS]
 *                          [--transactional-id X [--abort]]
 *       N messages: value "<P>-<i>" (P defaults to the topic), header seq=<i>, and key
 *       "key-<i % K>" with --keys (else null). The partition is KafkaJS's default
 *       partitioner's choice (murmur2 of the key like Java's client; spread when keyless).
 *       Sent in send() calls of S messages (default 100, MS apart), acks=-1; a send()
 *       that fails is retried by KafkaJS (10 times within ~8 s, e.g. while the broker restarts).
 *       With --transactional-id all sends are one transaction, committed (or aborted).
 *       Summary: {sent, codec, idempotent, transaction, partitions: {p: {baseOffsets: [one
 *       per send()]}}}.
 *
 *   node client.js consume --brokers B --topic T --group G [--n N] [--from-beginning]
 *                          [--members M --barrier DIR] [--timeout-ms MS]
 *       A consumer-group member (eachMessage, autoCommit off, KafkaJS's default isolation
 *       read_committed; --from-beginning only for partitions the group has no commit for).
 *       Without --members it stops after N messages; it then commits the offset after the
 *       last message it kept for each partition and disconnects (LeaveGroup). Messages KafkaJS
 *       hands over past the N-th are ignored and not committed.
 *       With --members M the member stays paused until the group is Stable with M members
 *       and its own assignment (seen in the GROUP_JOIN event) is the one the coordinator
 *       reports, then reads its partitions up to their high watermarks (the data must be
 *       produced beforehand), commits, writes DIR/<memberId> and waits until DIR holds M
 *       files before leaving, so no member's departure re-balances a member still reading.
 *       Summary: {count, memberId, assignments: [[p...] per GROUP_JOIN], messages: {p:
 *       [{offset, key, value, headers: [[name, value]...], timestamp}...]}, committed: {p:
 *       offset}}; keys, values and header values are shown as UTF-8 text (null stays null).
 *
 *   node client.js admin create-topic --brokers B --topic T --partitions P
 *   node client.js admin metadata     --brokers B --topic T
 *   node client.js admin offsets      --brokers B --topic T [--group G]
 *   node client.js admin describe-group --brokers B --group G
 *       createTopics / fetchTopicMetadata / fetchTopicOffsets + fetchOffsets / describeGroups.
 *   node client.js admin delete-records --brokers B --topic T --offsets P:O[,P:O...]
 *       One deleteTopicRecords with the partitions in the order given (a partition may be named
 *       twice: KafkaJS sends them as they are). Summary: {deleted: true}, or {errors:
 *       [{partition, type}]} for the partitions the broker refused (KafkaJSDeleteTopicRecordsError).
 */
'use strict'

const fs = require('fs')
const path = require('path')
const {
  AssignerProtocol,
  CompressionTypes,
  Kafka,
  Partitioners,
  logLevel,
} = require('kafkajs')

const USAGE = 'usage: client.js produce|consume|admin <sub> --brokers B ... (see header)'

/** --name value pairs and bare --flags into an object; positionals into `_`. */
function parseArgs(argv) {
  const flags = new Set(['--idempotent', '--abort', '--from-beginning'])
  const args = { _: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (!arg.startsWith('--')) {
      args._.push(arg)
    } else if (flags.has(arg)) {
      args[arg.slice(2)] = true
    } else {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`)
      args[arg.slice(2)] = argv[++i]
    }
  }
  return args
}

function required(args, name) {
  if (args[name] === undefined) throw new Error(`--${name} is required`)
  return args[name]
}

function intArg(args, name, fallback) {
  const raw = args[name] === undefined ? fallback : args[name]
  if (raw === undefined) throw new Error(`--${name} is required`)
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be an integer >= 0`)
  return value
}

/** KafkaJS's default logger prints DEBUG and INFO on stdout; keep stdout for the summary. */
const stderrLogger = () => ({ namespace, label, log }) => {
  const { message, timestamp, logger, ...extra } = log
  process.stderr.write(`${timestamp} ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

function kafkaFor(args) {
  const level = process.env.KAFKAJS_LOG_LEVEL || 'WARN'
  if (logLevel[level] === undefined) throw new Error(`unknown KAFKAJS_LOG_LEVEL ${level}`)
  return new Kafka({
    clientId: 'tiered-mq-kafkajs-test',
    brokers: required(args, 'brokers').split(','),
    logLevel: logLevel[level],
    logCreator: stderrLogger,
    // A local broker answers in milliseconds: fail fast instead of KafkaJS's long defaults.
    connectionTimeout: 3000,
    requestTimeout: 10000,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 10 },
  })
}

async function produce(args) {
  const topic = required(args, 'topic')
  const n = intArg(args, 'n')
  const keys = args.keys === undefined ? 0 : intArg(args, 'keys')
  const batch = intArg(args, 'batch', 100)
  const intervalMs = intArg(args, 'interval-ms', 0)
  const prefix = args.prefix === undefined ? topic : args.prefix
  const codecs = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }
  const codec = args.codec || 'none'
  if (codecs[codec] === undefined) {
    throw new Error(`--codec ${codec}: only none and gzip are built into KafkaJS`)
  }
  const transactionalId = args['transactional-id']
  const idempotent = Boolean(args.idempotent || transactionalId)
  const producer = kafkaFor(args).producer({
    idempotent,
    transactionalId,
    // Idempotence in KafkaJS requires at most one request in flight per broker.
    maxInFlightRequests: idempotent ? 1 : undefined,
    allowAutoTopicCreation: false,
    // KafkaJS 2's default, named to silence its warning: murmur2 of the key like Java's client.
    createPartitioner: Partitioners.DefaultPartitioner,
  })
  await producer.connect()
  const partitions = {}
  const transaction = transactionalId ? await producer.transaction() : null
  const sender = transaction || producer
  try {
    for (let start = 0; start < n; start += batch) {
      const messages = []
      for (let i = start; i < Math.min(n, start + batch); i++) {
        messages.push({
          key: keys ? `key-${i % keys}` : null,
          value: `${prefix}-${i}`,
          headers: { seq: String(i) },
        })
      }
      const results = await sender.send({
        topic,
        messages,
        acks: -1,
        compression: codecs[codec],
      })
      for (const r of results) {
        if (r.errorCode !== 0) throw new Error(`partition ${r.partition}: error ${r.errorCode}`)
        const entry = (partitions[r.partition] = partitions[r.partition] || { baseOffsets: [] })
        entry.baseOffsets.push(Number(r.baseOffset))
      }
      if (intervalMs) await sleep(intervalMs)
    }
    if (transaction) await (args.abort ? transaction.abort() : transaction.commit())
  } finally {
    await producer.disconnect()
  }
  const outcome = transaction ? (args.abort ? 'aborted' : 'committed') : null
  return { sent: n, codec, idempotent, transaction: outcome, partitions }
}

async function consume(args) {
  const topic = required(args, 'topic')
  const groupId = required(args, 'group')
  const members = args.members === undefined ? 0 : intArg(args, 'members')
  const barrier = members ? required(args, 'barrier') : null
  const n = members ? Infinity : intArg(args, 'n')
  const timeoutMs = intArg(args, 'timeout-ms', 45000)
  const kafka = kafkaFor(args)
  const admin = kafka.admin()
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: 10000,
    rebalanceTimeout: 10000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
    // A crash fails this command instead of restarting the consumer behind our back.
    retry: { restartOnFailure: async () => false },
  })

  const messages = {} // partition -> [{offset, key, value, headers, timestamp}, ...]
  const next = {} // partition -> offset after the last kept message
  const assignments = []
  let count = 0
  let memberId = null
  let assigned = []
  let highWatermarks = null // partition -> high watermark, once the group is complete
  let failure = null
  let finish
  const finished = new Promise(resolve => (finish = resolve))
  const fail = error => {
    failure = failure || error
    finish()
  }

  const caughtUp = () =>
    highWatermarks !== null &&
    assigned.every(p => (next[p] === undefined ? 0 : next[p]) >= highWatermarks[p])
  const done = () => (members ? caughtUp() : count >= n)

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    memberId = payload.memberId
    assigned = (payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b)
    assignments.push(assigned)
    // Until waitForGroup() has seen every member (a rebalance after that would show up as
    // messages delivered twice, which the test checks).
    if (members && highWatermarks === null) consumer.pause([{ topic }])
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => fail(payload.error))

  /** Resolve once the coordinator reports the group Stable with `members` members and our
   * assignment, then fetch the high watermarks and resume. */
  async function waitForGroup() {
    for (;;) {
      if (failure) return
      const { groups } = await admin.describeGroups([groupId])
      const group = groups[0]
      const me = group.members.find(m => m.memberId === memberId)
      if (group.state === 'Stable' && group.members.length === members && me) {
        const decoded = AssignerProtocol.MemberAssignment.decode(me.memberAssignment)
        const theirs = ((decoded && decoded.assignment[topic]) || []).slice().sort((a, b) => a - b)
        if (JSON.stringify(theirs) === JSON.stringify(assigned)) break
      }
      await sleep(100)
    }
    const offsets = await admin.fetchTopicOffsets(topic)
    highWatermarks = {}
    for (const o of offsets) highWatermarks[o.partition] = Number(o.high)
    consumer.resume([{ topic }])
    if (done()) finish()
  }

  await admin.connect()
  const timer = setTimeout(
    () => fail(new Error(`timed out after ${timeoutMs} ms with ${count} messages`)),
    timeoutMs
  )
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: Boolean(args['from-beginning']) })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        if (done()) return // past what we were asked for: neither kept nor committed
        const offset = Number(message.offset)
        // KafkaJS gives {name: value} and [values...] for a repeated name: list [name, value].
        const headers = []
        for (const [name, value] of Object.entries(message.headers || {})) {
          for (const v of Array.isArray(value) ? value : [value]) {
            headers.push([name, v === null || v === undefined ? null : v.toString()])
          }
        }
        ;(messages[partition] = messages[partition] || []).push({
          offset,
          key: message.key === null ? null : message.key.toString(),
          value: message.value === null ? null : message.value.toString(),
          headers,
          timestamp: Number(message.timestamp),
        })
        next[partition] = offset + 1
        count += 1
        if (done()) finish()
      },
    })
    if (members) waitForGroup().catch(fail)
    else if (n === 0) finish()
    await finished
    if (failure) throw failure
    const commits = Object.keys(next).map(p => ({
      topic,
      partition: Number(p),
      offset: String(next[p]),
    }))
    if (commits.length) await consumer.commitOffsets(commits)
    if (barrier) {
      fs.writeFileSync(path.join(barrier, encodeURIComponent(memberId)), '')
      while (fs.readdirSync(barrier).length < members) {
        if (failure) throw failure
        await sleep(50)
      }
    }
  } finally {
    clearTimeout(timer)
    await consumer.disconnect()
    await admin.disconnect()
  }
  return { count, memberId, assignments, messages, committed: next }
}

async function adminCommand(args) {
  const sub = args._[1]
  const admin = kafkaFor(args).admin()
  await admin.connect()
  try {
    switch (sub) {
      case 'create-topic': {
        const created = await admin.createTopics({
          topics: [
            {
              topic: required(args, 'topic'),
              numPartitions: intArg(args, 'partitions', 1),
              replicationFactor: 1,
            },
          ],
          waitForLeaders: true,
        })
        return { created }
      }
      case 'metadata': {
        const { topics } = await admin.fetchTopicMetadata({ topics: [required(args, 'topic')] })
        return { topics }
      }
      case 'offsets': {
        const topic = required(args, 'topic')
        const result = { topic: await admin.fetchTopicOffsets(topic) }
        if (args.group !== undefined) {
          result.group = await admin.fetchOffsets({ groupId: args.group, topics: [topic] })
        }
        return result
      }
      case 'delete-records': {
        const partitions = required(args, 'offsets')
          .split(',')
          .map(pair => {
            const [partition, offset] = pair.split(':')
            return { partition: Number(partition), offset }
          })
        const topic = required(args, 'topic')
        await admin.fetchTopicMetadata({ topics: [topic] }) // KafkaJS needs its leaders known
        try {
          await admin.deleteTopicRecords({ topic, partitions })
          return { deleted: true }
        } catch (e) {
          // a refusal KafkaJS does not retry comes wrapped (KafkaJSNonRetriableError, cause)
          const refused = e.name === 'KafkaJSDeleteTopicRecordsError' ? e : e.cause
          if (!refused || refused.name !== 'KafkaJSDeleteTopicRecordsError') throw e
          return {
            errors: refused.partitions.map(p => ({ partition: p.partition, type: p.error.type })),
          }
        }
      }
      case 'describe-group': {
        const { groups } = await admin.describeGroups([required(args, 'group')])
        return {
          groups: groups.map(g => ({
            groupId: g.groupId,
            state: g.state,
            protocolType: g.protocolType,
            protocol: g.protocol,
            members: g.members.map(m => {
              const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment)
              return {
                memberId: m.memberId,
                clientId: m.clientId,
                assignment: decoded ? decoded.assignment : null,
              }
            }),
          })),
        }
      }
      default:
        throw new Error(`unknown admin command ${sub}; ${USAGE}`)
    }
  } finally {
    await admin.disconnect()
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const commands = { produce, consume, admin: adminCommand }
  const command = commands[args._[0]]
  if (!command) throw new Error(USAGE)
  const summary = await command(args)
  // Exit only once the summary is flushed: a pipe takes 64 KiB before a write must wait.
  await new Promise(resolve => process.stdout.write(JSON.stringify(summary) + '\n', resolve))
}

main().then(
  () => process.exit(0), // KafkaJS may leave timers behind; nothing else is pending here
  error => {
    const command = process.argv[2] || '(none)'
    process.stderr.write(`kafkajs client: ${command} failed: ${error && error.stack}\n`)
    process.exit(1)
  }
)
