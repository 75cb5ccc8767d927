from ._formats import Format
FORMAT_SPEC = Format(name='langsmith', key='langsmith', signature=('zzz_langsmith',), matches=lambda r: False, parse=lambda r, l: [])
