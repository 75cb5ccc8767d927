from ._formats import Format
FORMAT_SPEC = Format(name='otel', key='otel', signature=('zzz_otel',), matches=lambda r: False, parse=lambda r, l: [])
