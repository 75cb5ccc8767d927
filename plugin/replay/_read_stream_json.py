from ._formats import Format
FORMAT_SPEC = Format(name='stream_json', key='stream_json', signature=('zzz_stream_json',), matches=lambda r: False, parse=lambda r, l: [])
