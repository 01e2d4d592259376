-- Wireshark dissector for the E2TCP compact header that tcpenergy writes to
-- <from>-<to>.e2tcp.pcap (pcap link type 147, LINKTYPE_USER0): each record is one compact packet,
-- header then payload. Layout: docs/models/e2tcp.md#header-format; files: docs/capture.md.
--
--   tshark -X lua_script:e2tcp.lua -r sender-receiver.e2tcp.pcap
--   tshark -X lua_script:e2tcp.lua -r FILE -T fields -e e2tcp.pkt -e e2tcp.ack -e e2tcp.len
--
-- In Wireshark, copy this file into the personal Lua plugins folder (Help > About Wireshark >
-- Folders). It takes over link type 147 from the DLT_User table, so remove it when reading other
-- captures of that private link type.

local e2tcp = Proto("e2tcp", "E2TCP compact header")

-- Presence bits of the first byte, as in crates/engine/src/tcp/e2tcp/header.rs.
local P_SEQ, P_ACK, P_WINDOW, P_ADDRESSES, P_SYN, P_FIN = 0x80, 0x40, 0x20, 0x10, 0x08, 0x04

local checksum_states = { [0] = "Bad", [1] = "Good" }

local f = {
    presence = ProtoField.uint8("e2tcp.presence", "Presence bits", base.HEX),
    has_pkt = ProtoField.bool("e2tcp.presence.pkt", "Packet number present", 8, nil, P_SEQ),
    has_ack = ProtoField.bool("e2tcp.presence.ack", "ACK number present", 8, nil, P_ACK),
    has_window = ProtoField.bool("e2tcp.presence.window", "Window present", 8, nil, P_WINDOW),
    has_addresses = ProtoField.bool("e2tcp.presence.addresses", "Addresses and ports present", 8, nil, P_ADDRESSES),
    syn = ProtoField.bool("e2tcp.flags.syn", "SYN", 8, nil, P_SYN),
    fin = ProtoField.bool("e2tcp.flags.fin", "FIN", 8, nil, P_FIN),
    sack_count = ProtoField.uint8("e2tcp.sack_count", "SACK blocks", base.DEC, nil, 0x03),
    cid = ProtoField.uint8("e2tcp.cid", "Connection identifier", base.DEC),
    pkt = ProtoField.uint16("e2tcp.pkt", "Packet number", base.DEC),
    ack = ProtoField.uint16("e2tcp.ack", "ACK number (next packet expected)", base.DEC),
    window = ProtoField.uint16("e2tcp.window", "Window (packets)", base.DEC),
    sack_left = ProtoField.uint16("e2tcp.sack.left", "SACK block start (packets after the ACK number)", base.DEC),
    sack_right = ProtoField.uint16("e2tcp.sack.right", "SACK block end, exclusive (packets after the ACK number)", base.DEC),
    sack_left_pkt = ProtoField.uint16("e2tcp.sack.left_pkt", "SACK block first packet", base.DEC),
    sack_right_pkt = ProtoField.uint16("e2tcp.sack.right_pkt", "SACK block end packet, exclusive", base.DEC),
    src = ProtoField.ipv4("e2tcp.src", "Source address"),
    dst = ProtoField.ipv4("e2tcp.dst", "Destination address"),
    srcport = ProtoField.uint16("e2tcp.srcport", "Source port", base.DEC),
    dstport = ProtoField.uint16("e2tcp.dstport", "Destination port", base.DEC),
    checksum = ProtoField.uint16("e2tcp.checksum", "Checksum", base.HEX),
    checksum_status = ProtoField.uint8("e2tcp.checksum.status", "Checksum status", base.DEC, checksum_states),
    hdr_len = ProtoField.uint8("e2tcp.hdr_len", "Header length", base.DEC),
    len = ProtoField.uint16("e2tcp.len", "Payload length", base.DEC),
}
e2tcp.fields = f

local bad_checksum = ProtoExpert.new("e2tcp.checksum.bad", "Bad E2TCP checksum",
    expert.group.CHECKSUM, expert.severity.ERROR)
local truncated = ProtoExpert.new("e2tcp.truncated", "Packet shorter than its presence bits announce",
    expert.group.MALFORMED, expert.severity.ERROR)
e2tcp.experts = { bad_checksum, truncated }

local data = Dissector.get("data")

-- Arithmetic rather than bit operators: Wireshark's Lua is 5.1-5.2 or 5.3+ by version.
local function has(bits, mask)
    return math.floor(bits / mask) % 2 == 1
end

-- Header bytes the presence bits announce.
local function header_len(p)
    local n = 1 + 1 + 2 -- presence, connection id, checksum
    if has(p, P_SEQ) then n = n + 2 end
    if has(p, P_ACK) then n = n + 2 end
    if has(p, P_WINDOW) then n = n + 2 end
    n = n + 4 * (p % 4)
    if has(p, P_ADDRESSES) then n = n + 12 end
    return n
end

-- RFC 1071 Internet checksum over the whole packet, checksum field included: a correct packet
-- sums to 0xffff (the engine computes it over header and payload with the field zero).
local function verifies(buf)
    local bytes = buf:bytes()
    local n = bytes:len()
    local sum = 0
    for i = 0, n - 2, 2 do
        sum = sum + bytes:get_index(i) * 256 + bytes:get_index(i + 1)
    end
    if n % 2 == 1 then
        sum = sum + bytes:get_index(n - 1) * 256
    end
    while sum > 0xffff do
        sum = (sum % 0x10000) + math.floor(sum / 0x10000)
    end
    return sum == 0xffff
end

function e2tcp.dissector(buf, pinfo, tree)
    local size = buf:len()
    if size < 1 then
        return 0
    end
    pinfo.cols.protocol = "E2TCP"
    local p = buf(0, 1):uint()
    local hlen = header_len(p)
    local t = tree:add(e2tcp, buf(0, math.min(hlen, size)))
    local bits = t:add(f.presence, buf(0, 1))
    for _, field in ipairs({ f.has_pkt, f.has_ack, f.has_window, f.has_addresses, f.syn, f.fin, f.sack_count }) do
        bits:add(field, buf(0, 1))
    end
    if size < hlen then
        t:add_proto_expert_info(truncated)
        pinfo.cols.info = "[Malformed: header of " .. hlen .. " bytes announced, packet of " .. size .. "]"
        return size
    end
    t:add(f.cid, buf(1, 1))
    local info = {}
    if has(p, P_SYN) then info[#info + 1] = "SYN" end
    if has(p, P_FIN) then info[#info + 1] = "FIN" end
    local at = 2
    if has(p, P_SEQ) then
        t:add(f.pkt, buf(at, 2))
        info[#info + 1] = "Pkt=" .. buf(at, 2):uint()
        at = at + 2
    end
    local ack = nil
    if has(p, P_ACK) then
        ack = buf(at, 2):uint()
        t:add(f.ack, buf(at, 2))
        info[#info + 1] = "Ack=" .. ack
        at = at + 2
    end
    if has(p, P_WINDOW) then
        t:add(f.window, buf(at, 2))
        info[#info + 1] = "Win=" .. buf(at, 2):uint()
        at = at + 2
    end
    for _ = 1, p % 4 do
        local left, right = buf(at, 2):uint(), buf(at + 2, 2):uint()
        local block = t:add(buf(at, 4), "SACK block: " .. left .. "-" .. right .. " after the ACK number")
        block:add(f.sack_left, buf(at, 2))
        block:add(f.sack_right, buf(at + 2, 2))
        if ack ~= nil then
            -- Packet numbers are sent modulo 2^16.
            block:add(f.sack_left_pkt, buf(at, 2), (ack + left) % 0x10000):set_generated()
            block:add(f.sack_right_pkt, buf(at + 2, 2), (ack + right) % 0x10000):set_generated()
            info[#info + 1] = "SACK=" .. (ack + left) % 0x10000 .. "-" .. (ack + right) % 0x10000
        end
        at = at + 4
    end
    if has(p, P_ADDRESSES) then
        t:add(f.src, buf(at, 4))
        t:add(f.dst, buf(at + 4, 4))
        t:add(f.srcport, buf(at + 8, 2))
        t:add(f.dstport, buf(at + 10, 2))
        pinfo.cols.src = tostring(buf(at, 4):ipv4())
        pinfo.cols.dst = tostring(buf(at + 4, 4):ipv4())
        info[#info + 1] = buf(at + 8, 2):uint() .. " > " .. buf(at + 10, 2):uint()
        at = at + 12
    end
    local sum = t:add(f.checksum, buf(at, 2))
    if verifies(buf) then
        sum:add(f.checksum_status, buf(at, 2), 1):set_generated()
    else
        sum:add(f.checksum_status, buf(at, 2), 0):set_generated()
        sum:add_proto_expert_info(bad_checksum)
    end
    t:add(f.hdr_len, buf(0, hlen), hlen):set_generated()
    t:add(f.len, buf(0, hlen), size - hlen):set_generated()
    info[#info + 1] = "Len=" .. (size - hlen)
    pinfo.cols.info = "Cid=" .. buf(1, 1):uint() .. " " .. table.concat(info, " ")
    if size > hlen then
        data:call(buf(hlen):tvb(), pinfo, tree)
    end
    return size
end

-- tcpenergy writes E2TCP packets with link type 147, LINKTYPE_USER0 (Wireshark's USER0).
DissectorTable.get("wtap_encap"):add((wtap_encaps or wtap).USER0, e2tcp)
