from ._formats import Format
FORMAT_SPEC = Format(name='anthropic_batches', key='anthropic_batches', signature=('zzz_anthropic_batches',), matches=lambda r: False, parse=lambda r, l: [])
