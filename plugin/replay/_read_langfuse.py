from ._formats import Format
FORMAT_SPEC = Format(name='langfuse', key='langfuse', signature=('zzz_langfuse',), matches=lambda r: False, parse=lambda r, l: [])
