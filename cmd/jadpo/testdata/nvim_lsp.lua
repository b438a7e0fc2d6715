-- Drives the built `jadpo lsp` from a real Neovim, 0.7 or later (lsp_nvim_test.go):
-- opens a .jadpo file, starts the built-in client as docs/guide/editors.md
-- does, and writes what Neovim got to JADPO_OUT as JSON: the hover at the
-- first position, the semantic tokens answer's size and the legend, and the
-- semantic tokens Neovim applied at each position (0.9 or later; empty
-- before).
local bin, root, file, outpath = vim.env.JADPO_BIN, vim.env.JADPO_ROOT, vim.env.JADPO_FILE, vim.env.JADPO_OUT
local positions = vim.json.decode(vim.env.JADPO_AT)
local v = vim.version()
local res = { version = string.format('%d.%d.%d', v.major, v.minor, v.patch), tokens = vim.empty_dict() }

local function finish()
  local f = assert(io.open(outpath, 'w'))
  f:write(vim.json.encode(res))
  f:close()
  vim.cmd('qall!')
end

vim.filetype.add({ extension = { jadpo = 'jadpo' } })
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local config = { name = 'jadpo', cmd = { bin, 'lsp' }, root_dir = root }
local id
if vim.lsp.start then -- 0.8
  id = vim.lsp.start(config)
else
  id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(buf, id)
end
local client
if not vim.wait(30000, function()
  client = vim.lsp.get_client_by_id(id)
  return client ~= nil and client.server_capabilities ~= nil and next(client.server_capabilities) ~= nil
end, 50) then
  res.error = 'the client did not initialize'
  return finish()
end
res.semanticTokensProvider = client.server_capabilities.semanticTokensProvider ~= nil

local first = positions[1]
vim.api.nvim_win_set_cursor(0, { first.line + 1, first.character })
local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
local answers = vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, 20000) or {}
for _, a in pairs(answers) do
  if a.result and a.result.contents then
    res.hover = a.result.contents.value or vim.inspect(a.result.contents)
  end
end

-- The server's semantic tokens as any Neovim's client receives them; from
-- 0.9, below, as its highlighter applied them.
local sem = vim.lsp.buf_request_sync(buf, 'textDocument/semanticTokens/full',
  { textDocument = vim.lsp.util.make_text_document_params() }, 20000) or {}
for _, a in pairs(sem) do
  if a.result and a.result.data then
    res.semanticIntegers = #a.result.data
  end
end
local provider = client.server_capabilities.semanticTokensProvider
if provider and provider.legend then
  res.legend = provider.legend.tokenTypes
end

if vim.lsp.semantic_tokens and vim.lsp.semantic_tokens.get_at_pos then
  local function at(p)
    return vim.lsp.semantic_tokens.get_at_pos(buf, p.line, p.character) or {}
  end
  vim.wait(30000, function() return #at(first) > 0 end, 50)
  for _, p in ipairs(positions) do
    local words = {}
    for _, t in ipairs(at(p)) do
      local mods = vim.tbl_keys(t.modifiers or {})
      table.sort(mods)
      table.insert(words, table.concat(vim.list_extend({ t.type }, mods), '.'))
    end
    res.tokens[p.name] = table.concat(words, ' ')
  end
end
finish()
