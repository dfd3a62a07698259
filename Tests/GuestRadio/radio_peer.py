#!/usr/bin/env python3
"""The radio around the guest: two Bumble controllers on one LocalLink.

C0 is the guest's controller: H4 on a unix socket that QEMU connects to a virtio console, attached
in the guest as hci0 by btattach. C1 is the peer in the room: it advertises iBeacons (legacy
ADV_NONCONN_IND or extended ADV_EXT_IND, several at once, switchable) and records every advertising
PDU it hears. Both are corrected where Bumble 0.0.236's controller is not faithful:
ADV_NONCONN_IND is sent and received, each advertisement is reported once
with its real PDU type and the peer's RSSI, legacy scans get legacy reports, the duplicate filter
and the event masks apply, the legacy interval is in 0.625 ms units, Reset resets, extended scan
parameters are refused while scanning as legacy ones are, and a controller
with LE Extended Advertising lists the extended commands among its supported commands.

Control: one JSON object a line on stdin, one answer a line on stdout ({"ok": true, ...} or
{"ok": false, "error": ...}). Operations:
  {"op": "advertise", "id": "a", "kind": "legacy"|"extended", "data": HEX, "interval_ms": 100, "rssi": -59,
   "address": "C1:C1:C1:C1:C1:C1"}
  {"op": "advertise_secure", "id": "s", "file": PATH, "rssi": -59}  the secure beacon of a provisioning document
                                                (`loyalty retailer beacon secure --output`): its EIDs, computed
                                                here as Google's eidtools.py does, in its form, new at each window
  {"op": "stop", "id": "a"}                     (no id: every advertisement)
  {"op": "heard", "since": N}                   PDUs C1 heard from index N on, and the next index
  {"op": "features", "extended": true|false}    C0's LE Extended Advertising feature bit
  {"op": "state"}                               C0's scan and advertising state, for "left as found"
  {"op": "guard", "pid": N}                     end process N (QEMU) when the peer ends
  {"op": "misbehave", "mode": "error"|"silent"|"none"}  C0 answers LE commands with an error status, or
                                                not at all (the kernel's own commands still work)
The peer ends at the end of its input: when the test process dies, so do the peer and the guest.
"""

import argparse
import asyncio
import datetime
import json
import os
import signal
import sys
import time

from bumble import hci, ll
from bumble.controller import Controller, LegacyAdvertiser
from bumble.link import LocalLink
from bumble.transport import open_transport
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

# Spec defaults after Reset: Set Event Mask (Vol 4 Part E 7.3.1) and LE Set Event Mask (7.8.1).
DEFAULT_EVENT_MASK = 0x00001FFFFFFFFFFF
DEFAULT_LE_EVENT_MASK = 0x1F
LE_META_EVENT_BIT = 61
ADV_TYPE_IND = hci.HCI_LE_Set_Advertising_Parameters_Command.AdvertisingType.ADV_IND
EXTENDED = hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
ExtendedType = hci.HCI_LE_Extended_Advertising_Report_Event.EventType
# The commands that go with LE Extended Advertising. Bumble lists none of them as supported, so the kernel
# (which decides from Read Local Supported Commands) neither scans extended nor unmasks extended reports.
EXTENDED_COMMANDS = {
    hci.HCI_LE_SET_ADVERTISING_SET_RANDOM_ADDRESS_COMMAND, hci.HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_ADVERTISING_DATA_COMMAND, hci.HCI_LE_SET_EXTENDED_SCAN_RESPONSE_DATA_COMMAND,
    hci.HCI_LE_SET_EXTENDED_ADVERTISING_ENABLE_COMMAND, hci.HCI_LE_READ_MAXIMUM_ADVERTISING_DATA_LENGTH_COMMAND,
    hci.HCI_LE_READ_NUMBER_OF_SUPPORTED_ADVERTISING_SETS_COMMAND, hci.HCI_LE_REMOVE_ADVERTISING_SET_COMMAND,
    hci.HCI_LE_CLEAR_ADVERTISING_SETS_COMMAND, hci.HCI_LE_SET_EXTENDED_SCAN_PARAMETERS_COMMAND,
    hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND, hci.HCI_LE_EXTENDED_CREATE_CONNECTION_COMMAND,
}


class FaithfulLegacyAdvertiser(LegacyAdvertiser):
    """Sends the PDU its advertising type names, at its interval in 0.625 ms units."""

    def _on_timer_fired(self) -> None:
        self.send_advertising_data()
        interval = max(self.advertising_interval_min * 0.000625, 0.02)
        self.timer_handle = asyncio.get_running_loop().call_later(interval, self._on_timer_fired)

    def send_advertising_data(self) -> None:
        if not self.enabled:
            return
        pdu_type = ll.AdvInd if self.advertising_type == ADV_TYPE_IND else ll.AdvNonConnInd
        self.controller.send_advertising_pdu(pdu_type(advertiser_address=self.address, data=self.advertising_data))


class FaithfulController(Controller):
    """Bumble's controller with the corrections a scanner under test needs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.le_legacy_advertiser = FaithfulLegacyAdvertiser(self)
        self.event_mask = DEFAULT_EVENT_MASK
        self.le_event_mask = DEFAULT_LE_EVENT_MASK
        self.set_extended(True)
        # "error" or "silent" for LE commands (OGF 0x08): a broken controller, for the bad-input checks.
        self.misbehaviour = None
        # Which command set enabled the scan: it decides the report format, as on a real controller.
        self.scan_commands = None
        self.reported = set()
        # The last scan parameters (type, interval, window) and when the scan was enabled: the controller listens
        # only in a window of LE_Scan_Window at the start of each LE_Scan_Interval, as a real one does.
        self.scan_parameters = None
        self.scan_enabled_at = None

    def set_extended(self, supported):
        """LE Extended Advertising in the LE features, and its commands in the supported commands."""
        features = type(self).le_features
        self.le_features = features if supported else features & ~EXTENDED
        commands = set(type(self).supported_commands)
        self.supported_commands = commands | EXTENDED_COMMANDS if supported else commands - EXTENDED_COMMANDS

    def on_hci_command_packet(self, command):
        if self.misbehaviour and command.op_code >> 10 == 0x08:
            if self.misbehaviour == 'error':
                self.send_hci_packet(hci.HCI_Command_Complete_Event(
                    num_hci_command_packets=1, command_opcode=command.op_code,
                    return_parameters=hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.HARDWARE_FAILURE_ERROR)))
            return
        super().on_hci_command_packet(command)

    def on_hci_reset_command(self, command):
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        self.advertising_sets.clear()
        self.le_scan_enable = False
        self.scan_commands = None
        self.event_mask = DEFAULT_EVENT_MASK
        self.le_event_mask = DEFAULT_LE_EVENT_MASK
        return super().on_hci_reset_command(command)

    def on_hci_le_set_scan_parameters_command(self, command):
        if not self.le_scan_enable:
            self.scan_parameters = [command.le_scan_type, command.le_scan_interval, command.le_scan_window]
        return super().on_hci_le_set_scan_parameters_command(command)

    def on_hci_le_set_extended_scan_parameters_command(self, command):
        if not self.le_scan_enable:  # the LE 1M PHY's, the first
            self.scan_parameters = [command.scan_types[0], command.scan_intervals[0], command.scan_windows[0]]
        if self.le_scan_enable:  # as the legacy command already does (Vol 4 Part E 7.8.64)
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        return super().on_hci_le_set_extended_scan_parameters_command(command)

    def on_hci_le_set_scan_enable_command(self, command):
        result = super().on_hci_le_set_scan_enable_command(command)
        self._scan_enabled('legacy')
        return result

    def on_hci_le_set_extended_scan_enable_command(self, command):
        result = super().on_hci_le_set_extended_scan_enable_command(command)
        self._scan_enabled('extended')
        return result

    def _scan_enabled(self, commands):
        self.scan_commands = commands if self.le_scan_enable else None
        self.scan_enabled_at = time.monotonic() if self.le_scan_enable else None

    def listening(self):
        """Whether the scan's window is open now (always when the window is the interval)."""
        if self.scan_parameters is None or self.scan_enabled_at is None:
            return True
        _, interval, window = self.scan_parameters
        return (time.monotonic() - self.scan_enabled_at) % (interval * 0.000625) < window * 0.000625
        self.reported = set()

    def send_hci_packet(self, packet):
        if isinstance(packet, hci.HCI_LE_Meta_Event):
            if not (self.event_mask >> LE_META_EVENT_BIT) & 1:
                return
            if not (self.le_event_mask >> (packet.subevent_code - 1)) & 1:
                return
        super().send_hci_packet(packet)

    def on_ll_advertising_pdu(self, packet):
        if isinstance(packet, (ll.AdvInd, ll.AdvNonConnInd, ll.AdvExtInd)):
            self.on_advertising_pdu(packet)
        else:
            super().on_ll_advertising_pdu(packet)

    def on_advertising_pdu(self, pdu):
        if not self.le_scan_enable or not self.listening():
            return
        extended = isinstance(pdu, ll.AdvExtInd)
        if extended and self.scan_commands != 'extended':
            return  # a legacy scan never sees extended PDUs
        if self.filter_duplicates:
            key = (str(pdu.advertiser_address), bytes(pdu.data))
            if key in self.reported:
                return
            self.reported.add(key)
        rssi = getattr(pdu, 'rssi', -50)
        connectable = isinstance(pdu, ll.AdvInd)
        if self.scan_commands == 'extended':
            if extended:
                event_type = 0
            else:
                event_type = ExtendedType.LEGACY_ADVERTISING_PDU_USED
                if connectable:
                    event_type |= ExtendedType.CONNECTABLE_ADVERTISING | ExtendedType.SCANNABLE_ADVERTISING
            report = hci.HCI_LE_Extended_Advertising_Report_Event.Report(
                event_type=event_type, address_type=pdu.advertiser_address.address_type,
                address=pdu.advertiser_address, primary_phy=hci.Phy.LE_1M,
                secondary_phy=hci.Phy.LE_1M if extended else 0, advertising_sid=pdu.sid if extended else 0xFF,
                tx_power=0x7F, rssi=rssi, periodic_advertising_interval=0, direct_address_type=0,
                direct_address=hci.Address.ANY, data=pdu.data)
            self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))
        else:
            kind = hci.HCI_LE_Advertising_Report_Event.EventType
            report = hci.HCI_LE_Advertising_Report_Event.Report(
                event_type=kind.ADV_IND if connectable else kind.ADV_NONCONN_IND,
                address_type=pdu.advertiser_address.address_type, address=pdu.advertiser_address,
                data=pdu.data, rssi=rssi)
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))


class PeerController(FaithfulController):
    """The peer: records what it hears instead of reporting to a host."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.heard = []

    def on_ll_advertising_pdu(self, packet):
        kinds = {ll.AdvInd: 'ADV_IND', ll.AdvNonConnInd: 'ADV_NONCONN_IND', ll.AdvExtInd: 'ADV_EXT_IND'}
        if kind := kinds.get(type(packet)):
            self.heard.append({
                'kind': kind, 'address': str(packet.advertiser_address), 'data': bytes(packet.data).hex(),
                't': time.monotonic()})


def ephemeral_id(identity_key: bytes, exponent: int, counter: int) -> bytes:
    """Eddystone-EID (eddystone-eid/eid-computation.md), independently of loyalty's own code."""
    def aes(key, block):
        encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
        return encryptor.update(block) + encryptor.finalize()
    temporary_key = aes(identity_key, bytes(11) + b'\xff' + bytes(2) + (counter >> 16).to_bytes(2, 'big'))
    return aes(temporary_key, bytes(11) + bytes([exponent]) + (counter >> exponent << exponent).to_bytes(4, 'big'))[:8]


def secure_beacon_data(document, now: float, power: int = -59) -> tuple:
    """The advertising data of a provisioning document's beacon at Unix time `now`, and when it next changes."""
    counter_at = datetime.datetime.fromisoformat(document['counter_at'].replace('Z', '+00:00')).timestamp()
    counter = document['counter'] + now - counter_at
    exponent = document['exponent']
    eid = ephemeral_id(bytes.fromhex(document['identity_key']), exponent, int(counter))
    window = 1 << exponent
    next_turn = now + (int(counter) // window + 1) * window - counter
    flags = bytes([0x02, 0x01, 0x06])
    if document['form'] == 'ibeacon':
        uuid = bytes.fromhex(document['uuid'].replace('-', ''))
        data = flags + bytes([0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + uuid + eid[:4] + bytes([power & 0xFF])
    else:
        frame = bytes([0x30, (power + 41) & 0xFF]) + eid
        data = flags + bytes([0x03, 0x03, 0xAA, 0xFE, len(frame) + 3, 0x16, 0xAA, 0xFE]) + frame
    return data, next_turn


class Peer:
    def __init__(self, guest: FaithfulController, peer: PeerController):
        self.guest = guest
        self.peer = peer
        self.advertisements = {}
        self.turns = {}
        self.guarded = None

    def advertise(self, request):
        self.stop({'id': request.get('id', 'a')})
        pdu_type = ll.AdvExtInd if request.get('kind', 'legacy') == 'extended' else ll.AdvNonConnInd
        address = hci.Address(request['address']) if 'address' in request else self.peer.public_address
        pdu = pdu_type(advertiser_address=address, data=bytes.fromhex(request['data']))
        pdu.rssi = int(request.get('rssi', -59))
        interval = float(request.get('interval_ms', 100)) / 1000

        def fire():
            self.peer.send_advertising_pdu(pdu)
            self.advertisements[key] = asyncio.get_running_loop().call_later(interval, fire)

        key = request.get('id', 'a')
        self.advertisements[key] = asyncio.get_running_loop().call_soon(fire)
        return {}

    def advertise_secure(self, request):
        with open(request['file']) as file:
            document = json.load(file)
        key = request.get('id', 's')

        def turn():
            data, next_turn = secure_beacon_data(document, time.time())
            self.advertise({**request, 'op': 'advertise', 'id': key, 'data': data.hex()})
            self.turns[key] = asyncio.get_running_loop().call_later(max(0.0, next_turn - time.time()), turn)

        turn()
        data, _ = secure_beacon_data(document, time.time())
        return {'data': data.hex()}

    def stop(self, request):
        keys = [request['id']] if 'id' in request else list(self.advertisements)
        for key in keys:
            if handle := self.advertisements.pop(key, None):
                handle.cancel()
        if request.get('op') == 'stop':
            for key in [request['id']] if 'id' in request else list(self.turns):
                if handle := self.turns.pop(key, None):
                    handle.cancel()
        return {}

    def heard(self, request):
        since = int(request.get('since', 0))
        return {'pdus': self.peer.heard[since:], 'next': len(self.peer.heard)}

    def features(self, request):
        self.guest.set_extended(bool(request['extended']))
        return {}

    def misbehave(self, request):
        self.guest.misbehaviour = None if request['mode'] == 'none' else request['mode']
        return {}

    def state(self, request):
        return {
            'scanning': self.guest.le_scan_enable, 'scan_commands': self.guest.scan_commands,
            'scan_parameters': self.guest.scan_parameters,
            'advertising': self.guest.is_advertising}

    def guard(self, request):
        self.guarded = int(request['pid'])
        return {}

    def end_guarded(self):
        """A guest whose host side is gone would run forever: a virtio console does not hang up."""
        if self.guarded is None:
            return
        try:
            os.kill(self.guarded, signal.SIGTERM)
            for _ in range(50):
                time.sleep(0.1)
                os.kill(self.guarded, 0)
            os.kill(self.guarded, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def handle(self, line):
        try:
            request = json.loads(line)
            answer = getattr(self, request['op'])(request)
            return {'ok': True, **answer}
        except Exception as error:  # the harness reads the message; the peer keeps running
            return {'ok': False, 'error': f'{type(error).__name__}: {error}'}


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--hci-socket', required=True, help='unix socket QEMU connects to (H4)')
    parser.add_argument('--legacy-only', action='store_true', help='C0 without LE Extended Advertising')
    arguments = parser.parse_args()

    link = LocalLink()
    transport = await open_transport(f'unix-server:{arguments.hci_socket}')
    guest = FaithfulController(
        'C0', host_source=transport.source, host_sink=transport.sink, link=link, public_address='C0:C0:C0:C0:C0:C0')
    if arguments.legacy_only:
        guest.set_extended(False)
    peer = PeerController('C1', link=link, public_address='C1:C1:C1:C1:C1:C1')
    control = Peer(guest, peer)

    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print(json.dumps({'ok': True, 'ready': arguments.hci_socket}), flush=True)
    try:
        while line := await reader.readline():
            print(json.dumps(control.handle(line)), flush=True)
    finally:
        control.end_guarded()
    await transport.close()


if __name__ == '__main__':
    asyncio.run(main())
