# An aiosmtpd handler for mgmtapi's tests (internal/smtptest): it keeps every accepted message as
# N.eml (the message) and N.json (the envelope) in its directory, appends the Message-ID of every
# DATA command to attempts.log, and refuses on the recipient's local part:
#   refused...   RCPT answered 550 (permanent)
#   busy...      RCPT answered 450 (temporary)
#   rejected...  DATA answered 554 (permanent)
#   flaky...     DATA answered 451 the first time a Message-ID is seen, accepted after
import email
import json
import os


class Recorder:
    def __init__(self, directory):
        self.directory = directory
        self.seen = set()
        self.count = 0

    @classmethod
    def from_cli(cls, parser, *args):
        if len(args) != 1:
            parser.error('mgmtapi_smtp_handler.Recorder takes one argument, the directory')
        return cls(args[0])

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split('@')[0]
        if local.startswith('refused'):
            return '550 5.1.1 <%s>: no such user here' % address
        if local.startswith('busy'):
            return '450 4.2.1 mailbox busy, try later'
        envelope.rcpt_tos.append(address)
        return '250 OK'

    async def handle_DATA(self, server, session, envelope):
        message_id = email.message_from_bytes(envelope.original_content or envelope.content).get('Message-ID', '')
        with open(os.path.join(self.directory, 'attempts.log'), 'a') as log:
            log.write(message_id + '\n')
        locals_ = [a.split('@')[0] for a in envelope.rcpt_tos]
        if any(l.startswith('rejected') for l in locals_):
            return '554 5.7.1 message rejected as spam'
        if any(l.startswith('flaky') for l in locals_) and message_id not in self.seen:
            self.seen.add(message_id)
            return '451 4.3.0 temporary failure, try again'
        self.count += 1
        base = os.path.join(self.directory, '%d' % self.count)
        with open(base + '.tmp', 'wb') as f:
            f.write(envelope.original_content or envelope.content)
        with open(base + '.json', 'w') as f:
            json.dump({'from': envelope.mail_from, 'to': envelope.rcpt_tos}, f)
        os.rename(base + '.tmp', base + '.eml')
        return '250 Message accepted for delivery'
