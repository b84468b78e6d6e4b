import CNATS
import Glibc

/// What the stream answered for one asynchronous publish.
public struct PublishAck: Sendable {
    /// The message's `Nats-Msg-Id` header.
    public let messageID: String?
    /// The stream sequence it was stored at (for a duplicate, the first copy's); nil on failure.
    public let sequence: UInt64?
    /// True when the stream already held a message with this id inside its duplicates window.
    public let duplicate: Bool
    /// Why the publish failed (stream full, no leader, timeout); nil when stored.
    public let failure: String?
}

/// A JetStream stream's settings, as `offertrackd --forward` creates it when absent.
public struct StreamConfiguration: Sendable, Equatable {
    public var name: String
    public var subjects: [String]
    public var replicas: Int64
    /// The stream's size limit; with `Discard=New` a full stream refuses new messages instead of dropping old.
    public var maxBytes: Int64
    /// How long the stream remembers message ids for deduplication, in milliseconds.
    public var duplicatesWindowMilliseconds: Int64
    /// The stream's description (an application may record what it needs to agree on there).
    public var description: String

    public init(
        name: String, subjects: [String], replicas: Int64, maxBytes: Int64, duplicatesWindowMilliseconds: Int64,
        description: String = ""
    ) {
        self.name = name
        self.subjects = subjects
        self.replicas = replicas
        self.maxBytes = maxBytes
        self.duplicatesWindowMilliseconds = duplicatesWindowMilliseconds
        self.description = description
    }
}

/// What the cluster says about an existing stream.
public struct StreamInfo: Sendable, Equatable {
    public let description: String
    public let subjects: [String]
    public let replicas: Int64
    public let maxBytes: Int64
    /// Messages stored now.
    public let messages: UInt64
    /// When the stream was created (UTC nanoseconds): a stream deleted and created again has another.
    public let created: Int64
}

/// Where a durable consumer is: what it has not been given yet, and what it was given and not acknowledged.
public struct ConsumerState: Sendable, Equatable {
    /// Messages of the stream for it that it has not been given yet.
    public let pending: UInt64
    /// Messages it was given and has not acknowledged.
    public let acknowledgementsPending: Int64
    /// Messages it was given more than once.
    public let redelivered: Int64
}

/// The account's JetStream storage limits (-1: no limit set for the account).
public struct AccountStorageLimits: Sendable, Equatable {
    /// File storage the account may use over all its streams (each replica counts).
    public let maxStore: Int64
    /// The largest `MaxBytes` one file-stored stream may have.
    public let maxStreamBytes: Int64
}

/// One connection to a NATS cluster with its JetStream context: file-stored streams, asynchronous publishes
/// with message ids, and durable pull consumers. It reconnects for ever (`MaxReconnect -1`), across servers.
///
/// libnats is thread-safe for these calls; the acknowledgement handler runs on a libnats thread.
public final class JetStreamClient: @unchecked Sendable {
    private let connection: OpaquePointer
    private let context: OpaquePointer
    private let acknowledgements: AcknowledgementBox

    /// Connects to `servers` (`nats://127.0.0.1:4222`, …). `onAcknowledgement` is called once for every
    /// asynchronous publish, stored or failed; at most `maxPending` publishes are in flight (more wait).
    public init(
        servers: [String], name: String, maxPending: Int64 = 4096,
        onAcknowledgement: @escaping @Sendable (PublishAck) -> Void = { _ in }
    ) throws(NATSError) {
        var options: OpaquePointer?
        try NATSError.check("natsOptions_Create", natsOptions_Create(&options))
        defer { natsOptions_Destroy(options) }
        let owned = servers.map { strdup($0) }
        defer { owned.forEach { free($0) } }
        var pointers = owned.map { UnsafePointer($0) }
        let status = pointers.withUnsafeMutableBufferPointer {
            natsOptions_SetServers(options, $0.baseAddress, Int32($0.count))
        }
        try NATSError.check("natsOptions_SetServers", status)
        try NATSError.check("natsOptions_SetName", natsOptions_SetName(options, name))
        try NATSError.check("natsOptions_SetMaxReconnect", natsOptions_SetMaxReconnect(options, -1))
        try NATSError.check("natsOptions_SetReconnectWait", natsOptions_SetReconnectWait(options, 250))
        // With a connected callback the first connect is asynchronous when no server answers (without one it
        // would block, retrying, until one does).
        try NATSError.check(
            "natsOptions_SetRetryOnFailedConnect",
            natsOptions_SetRetryOnFailedConnect(options, true, { _, _ in }, nil))
        var connection: OpaquePointer?
        // With retry on a failed connect, a cluster that is down now is not an error: it connects later.
        let connected = natsConnection_Connect(&connection, options)
        if connected != NATS_NOT_YET_CONNECTED { try NATSError.check("natsConnection_Connect", connected) }
        guard let connection else { throw NATSError("natsConnection_Connect", NATS_ERR) }
        acknowledgements = AcknowledgementBox(onAcknowledgement)
        var jetStream = jsOptions()
        jsOptions_Init(&jetStream)
        jetStream.PublishAsync.MaxPending = maxPending
        jetStream.PublishAsync.AckHandler = publishAcknowledged
        jetStream.PublishAsync.AckHandlerClosure = Unmanaged.passUnretained(acknowledgements).toOpaque()
        var context: OpaquePointer?
        let created = natsConnection_JetStream(&context, connection, &jetStream)
        guard created == NATS_OK, let context else {
            natsConnection_Destroy(connection)
            throw NATSError("natsConnection_JetStream", created)
        }
        self.connection = connection
        self.context = context
    }

    deinit {
        jsCtx_Destroy(context)
        natsConnection_Destroy(connection)
    }

    /// Whether the connection is up now (it reconnects by itself while it is not).
    public var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    /// The largest message (payload and headers) the connected server takes, in bytes (its `max_payload`); 0
    /// while not connected.
    public var maxPayload: Int64 { isConnected ? natsConnection_GetMaxPayload(connection) : 0 }

    /// Creates the stream unless it exists (file storage, `Discard=New`); true when it was created.
    @discardableResult
    public func addStreamIfAbsent(_ configuration: StreamConfiguration) throws(NATSError) -> Bool {
        if try streamInfo(configuration.name) != nil { return false }
        try addStream(configuration)
        return true
    }

    /// The stream's configuration and size, or nil when the cluster has no stream of that name.
    public func streamInfo(_ name: String) throws(NATSError) -> StreamInfo? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetStreamInfo(&info, context, name, nil, &code)
        if status == NATS_NOT_FOUND || code == JSStreamNotFoundErr { return nil }
        try NATSError.check("js_GetStreamInfo", status, jetStreamCode: code)
        guard let info, let config = info.pointee.Config else { throw NATSError("js_GetStreamInfo", NATS_ERR) }
        defer { jsStreamInfo_Destroy(info) }
        let subjects = (0..<Int(config.pointee.SubjectsLen)).compactMap { index in
            config.pointee.Subjects?[index].map { String(cString: $0) }
        }
        return StreamInfo(
            description: config.pointee.Description.map { String(cString: $0) } ?? "", subjects: subjects,
            replicas: config.pointee.Replicas, maxBytes: config.pointee.MaxBytes, messages: info.pointee.State.Msgs,
            created: info.pointee.Created)
    }

    /// The account's JetStream storage limits.
    public func accountStorageLimits() throws(NATSError) -> AccountStorageLimits {
        var info: UnsafeMutablePointer<jsAccountInfo>?
        var code = jsErrCode(rawValue: 0)
        try NATSError.check("js_GetAccountInfo", js_GetAccountInfo(&info, context, nil, &code), jetStreamCode: code)
        guard let info else { throw NATSError("js_GetAccountInfo", NATS_ERR) }
        defer { jsAccountInfo_Destroy(info) }
        return AccountStorageLimits(
            maxStore: info.pointee.Limits.MaxStore, maxStreamBytes: info.pointee.Limits.StoreMaxStreamBytes)
    }

    /// Whether `stream` has a consumer named `durable` (false when the stream itself is gone).
    public func consumerExists(stream: String, durable: String) throws(NATSError) -> Bool {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetConsumerInfo(&info, context, stream, durable, nil, &code)
        if status == NATS_NOT_FOUND || code == JSConsumerNotFoundErr || code == JSStreamNotFoundErr { return false }
        try NATSError.check("js_GetConsumerInfo", status, jetStreamCode: code)
        jsConsumerInfo_Destroy(info)
        return true
    }

    /// The names of `stream`'s consumers, asked in one request (the server pages them; libnats reads every page);
    /// nil when the stream is gone.
    public func consumerNames(stream: String) throws(NATSError) -> Set<String>? {
        var list: UnsafeMutablePointer<jsConsumerNamesList>?
        var code = jsErrCode(rawValue: 0)
        let status = js_ConsumerNames(&list, context, stream, nil, &code)
        if code == JSStreamNotFoundErr { return nil }
        if status == NATS_NOT_FOUND { return [] }  // libnats's answer for a stream that has no consumer
        try NATSError.check("js_ConsumerNames", status, jetStreamCode: code)
        guard let list else { return [] }
        defer { jsConsumerNamesList_Destroy(list) }
        var names: Set<String> = []
        for index in 0..<Int(list.pointee.Count) {
            if let name = list.pointee.List[index] { names.insert(String(cString: name)) }
        }
        return names
    }

    /// Where the durable consumer `durable` of `stream` is; nil when it or the stream is gone.
    public func consumerState(stream: String, durable: String) throws(NATSError) -> ConsumerState? {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetConsumerInfo(&info, context, stream, durable, nil, &code)
        if status == NATS_NOT_FOUND || code == JSConsumerNotFoundErr || code == JSStreamNotFoundErr { return nil }
        try NATSError.check("js_GetConsumerInfo", status, jetStreamCode: code)
        guard let info else { throw NATSError("js_GetConsumerInfo", NATS_ERR) }
        defer { jsConsumerInfo_Destroy(info) }
        return ConsumerState(
            pending: info.pointee.NumPending, acknowledgementsPending: info.pointee.NumAckPending,
            redelivered: info.pointee.NumRedelivered)
    }

    /// Deletes the durable consumer `durable` of `stream` (an operator's action; its messages stay in the stream).
    public func deleteConsumer(stream: String, durable: String) throws(NATSError) {
        var code = jsErrCode(rawValue: 0)
        try NATSError.check(
            "js_DeleteConsumer", js_DeleteConsumer(context, stream, durable, nil, &code), jetStreamCode: code)
    }

    /// Deletes the stream and every message and consumer in it (an operator's action).
    public func deleteStream(_ name: String) throws(NATSError) {
        var code = jsErrCode(rawValue: 0)
        try NATSError.check("js_DeleteStream", js_DeleteStream(context, name, nil, &code), jetStreamCode: code)
    }

    /// Creates the stream (file storage, `Discard=New`); fails when one of that name exists.
    public func addStream(_ configuration: StreamConfiguration) throws(NATSError) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        let name = strdup(configuration.name)
        let description = strdup(configuration.description)
        let subjects = configuration.subjects.map { strdup($0) }
        defer {
            free(name)
            free(description)
            subjects.forEach { free($0) }
        }
        var subjectPointers = subjects.map { UnsafePointer($0) }
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        config.Name = UnsafePointer(name)
        if !configuration.description.isEmpty { config.Description = UnsafePointer(description) }
        config.Storage = js_FileStorage
        config.Discard = js_DiscardNew
        config.Replicas = configuration.replicas
        config.MaxBytes = configuration.maxBytes
        config.Duplicates = configuration.duplicatesWindowMilliseconds * 1_000_000
        let status = subjectPointers.withUnsafeMutableBufferPointer { buffer in
            config.Subjects = buffer.baseAddress
            config.SubjectsLen = Int32(buffer.count)
            return js_AddStream(&info, context, &config, nil, &code)
        }
        try NATSError.check("js_AddStream", status, jetStreamCode: code)
        jsStreamInfo_Destroy(info)
    }

    /// Publishes `data` to `subject` with `Nats-Msg-Id: messageID`, without waiting for the stream: the
    /// outcome comes to the acknowledgement handler. Blocks only while `maxPending` publishes are in flight.
    public func publishAsync(subject: String, data: [UInt8], messageID: String) throws(NATSError) {
        let status = messageID.withCString { id in
            var options = jsPubOptions()
            jsPubOptions_Init(&options)
            options.MsgId = id
            return data.withUnsafeBytes { bytes in
                js_PublishAsync(context, subject, bytes.baseAddress, Int32(bytes.count), &options)
            }
        }
        try NATSError.check("js_PublishAsync", status)
    }

    /// Forgets every asynchronous publish not answered yet: an answer that still comes for one is dropped. libnats
    /// keeps a publish pending until its answer, which never comes when a server died holding it, and stalls
    /// every publish once `maxPending` are pending; a caller publishing the unanswered ones again forgets them
    /// first.
    public func forgetPendingPublishes() {
        var pending = natsMsgList()
        guard js_PublishAsyncGetPendingList(&pending, context) == NATS_OK else { return }
        natsMsgList_Destroy(&pending)
    }

    /// Waits up to `timeoutMilliseconds` for every asynchronous publish to be answered.
    public func waitForPublishes(timeoutMilliseconds: Int64) throws(NATSError) {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = timeoutMilliseconds
        try NATSError.check("js_PublishAsyncComplete", js_PublishAsyncComplete(context, &options))
    }

    /// A durable pull consumer of `stream` for `filterSubject` (created unless it exists; explicit acks, from
    /// the stream's first message), bound to a subscription.
    public func pullSubscription(
        stream: String, durable: String, filterSubject: String, maxAckPending: Int64 = 20_000
    ) throws(NATSError) -> PullSubscription {
        var code = jsErrCode(rawValue: 0)
        var consumer = jsConsumerConfig()
        jsConsumerConfig_Init(&consumer)
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        let added = durable.withCString { durableName in
            filterSubject.withCString { filter in
                consumer.Durable = durableName
                consumer.FilterSubject = filter
                consumer.AckPolicy = js_AckExplicit
                consumer.DeliverPolicy = js_DeliverAll
                consumer.MaxAckPending = maxAckPending
                return js_AddConsumer(&info, context, stream, &consumer, nil, &code)
            }
        }
        try NATSError.check("js_AddConsumer", added, jetStreamCode: code)
        jsConsumerInfo_Destroy(info)
        var subscription: OpaquePointer?
        let subscribed = stream.withCString { streamName in
            durable.withCString { durableName in
                var options = jsSubOptions()
                jsSubOptions_Init(&options)
                options.Stream = streamName
                options.Consumer = durableName
                return js_PullSubscribe(&subscription, context, filterSubject, durableName, nil, &options, &code)
            }
        }
        try NATSError.check("js_PullSubscribe", subscribed, jetStreamCode: code)
        guard let subscription else { throw NATSError("js_PullSubscribe", NATS_ERR) }
        return PullSubscription(subscription, client: self)
    }
}

/// The C acknowledgement handler: reads the message id, destroys the message (libnats hands it over; not
/// destroying it leaks it) and passes the outcome to the client's Swift handler.
private let publishAcknowledged: jsPubAckHandler = { _, message, ack, failure, closure in
    var idPointer: UnsafePointer<CChar>?
    var messageID: String?
    if natsMsgHeader_Get(message, "Nats-Msg-Id", &idPointer) == NATS_OK, let idPointer {
        messageID = String(cString: idPointer)
    }
    var reason: String?
    if let failure {
        let text = failure.pointee.ErrText.map { String(cString: $0) } ?? ""
        reason =
            String(cString: natsStatus_GetText(failure.pointee.Err)) + (text.isEmpty ? "" : ": \(text)")
            + " (JetStream error \(failure.pointee.ErrCode.rawValue))"
    }
    let outcome = PublishAck(
        messageID: messageID, sequence: ack.map { $0.pointee.Sequence }, duplicate: ack?.pointee.Duplicate ?? false,
        failure: reason ?? (ack == nil ? "no acknowledgement" : nil))
    natsMsg_Destroy(message)
    guard let closure else { return }
    Unmanaged<AcknowledgementBox>.fromOpaque(closure).takeUnretainedValue().handler(outcome)
}

/// Holds the Swift handler for the C callback; it lives as long as its client.
private final class AcknowledgementBox: Sendable {
    let handler: @Sendable (PublishAck) -> Void
    init(_ handler: @escaping @Sendable (PublishAck) -> Void) { self.handler = handler }
}
